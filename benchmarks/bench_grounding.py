"""Repository map figures (issue 16): time and size on a 10,000-file repository, and the
planning prompt's tokens with the map for the benchmark issue.

    .venv/bin/python benchmarks/bench_grounding.py [--files 10000] [--server URL]

(a) A generated git repository of `--files` files (70% Python modules with docstrings and
    functions, 15% JavaScript, 10% Markdown, 4% binary, 1% large files over max_file_bytes):
    the map built cold (no cache: every file read and parsed), warm (the per-commit cache hit),
    and warm with one file edited in the work tree; the map's size in characters and estimated
    tokens at the default budget.
(b) The planning request (system + user message) for the token benchmark's issue ("Add a
    CONTRIBUTING.md" on a README-only repository) without and with the map, and on the 10k
    repository. Tokens by a running llama-server's /tokenize when --server is given (Qwen2.5
    tokenizer), else estimated at 4 characters per token.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_tokens import ISSUE, README  # the token benchmark's issue
from planner.config import RepositoryMapConfig, load_config
from planner.grounding.repo_map import build_map
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from tests.plans import planned


def module(n: int) -> str:
    functions = "".join(
        f'\n\ndef handle_{n}_{k}(event, context):\n    """Handle event kind {k} of module {n}."""\n'
        f"    total = 0\n    for item in event:\n        total += item\n    return total\n"
        for k in range(4)
    )
    return f'"""Module {n}: request handlers for area {n % 97}."""\n\nimport os{functions}\n'


def generate(root: Path, count: int) -> None:
    for n in range(count):
        share = n % 100
        directory = root / f"pkg{n % 40}" / f"sub{n % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        if share < 70:
            (directory / f"module_{n}.py").write_text(module(n))
        elif share < 85:
            (directory / f"view_{n}.js").write_text(
                f"// View {n}.\nexport function render{n}() {{}}\n"
            )
        elif share < 95:
            (directory / f"notes_{n}.md").write_text(f"# Notes {n}\n\n## Details\n")
        elif share < 99:
            (directory / f"image_{n}.png").write_bytes(b"\x89PNG\0" + bytes(range(256)) * 4)
        else:
            (directory / f"data_{n}.csv").write_text("a,b\n" * 80_000)
    (root / "README.md").write_text(README)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bench"], cwd=root, check=True)


def timed(root: Path, config: RepositoryMapConfig, text: str) -> tuple[str, Any]:
    """Wall and CPU milliseconds (CPU of this process: git's own time is not in it), so a
    machine busy with other jobs shows as the gap between the two."""
    wall, cpu = time.perf_counter(), time.process_time()
    shown = build_map(root, config, text)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return f"{wall * 1000:,.0f} ms wall / {cpu * 1000:,.0f} ms CPU", shown


def median_of(runs: list[str]) -> str:
    return sorted(runs, key=lambda text: float(text.split(" ")[0].replace(",", "")))[len(runs) // 2]


def bench_map(count: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-map-"))
    generate(root, count)
    config = RepositoryMapConfig()
    text = ISSUE.title + "\n" + ISSUE.body + "\nhandle_4242_1 in module_4242.py fails"
    cold, shown = timed(root, config, text)
    assert not shown.cache_hit
    warm = [timed(root, config, text)[0] for _ in range(5)]
    (root / "pkg2" / "sub2" / "module_42.py").write_text(module(43))
    dirty = [timed(root, config, text)[0] for _ in range(3)]
    print(f"repository: {shown.files_total} files (git ls-files), default map budget")
    print(f"  cold (index built, no cache): {cold}")
    print(f"  warm (cache hit, same commit): {median_of(warm)}, median of 5")
    print(f"  warm, one file edited:        {median_of(dirty)}, median of 3")
    print(
        f"  map: {len(shown.text):,} chars, ~{shown.tokens} tokens (estimated), "
        f"{len(shown.files_shown)} files shown, truncated={shown.truncated}"
    )
    return root


def planning_request(root: Path, **overrides: Any) -> list[dict[str, Any]]:
    with ScriptedModelServer() as server:
        server.add(*planned("task_1"))
        env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
        config = load_config(None, env=env, overrides={"budget.max_model_calls": 2, **overrides})
        run_pass(PassSetup(config=config, workspace=root), ISSUE)
        shutil.rmtree(root / "planning_history", ignore_errors=True)
        messages: list[dict[str, Any]] = next(
            r.body["messages"] for r in server.requests if r.kind == "planning"
        )
        return messages


def tokens(text: str, server: str | None) -> int:
    if server is None:
        return -(-len(text) // 4)
    request = urllib.request.Request(
        server.rstrip("/").removesuffix("/v1") + "/tokenize",
        data=json.dumps({"content": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return len(json.load(answer)["tokens"])


def bench_prompt(big: Path, server: str | None) -> None:
    small = Path(tempfile.mkdtemp(prefix="bench-greeter-"))
    (small / "README.md").write_text(README)
    subprocess.run(["git", "init", "-q"], cwd=small, check=True)
    counted = "llama-server /tokenize" if server else "estimated, 4 chars/token"
    print(f"planning request for the benchmark issue (system + user message, {counted}):")
    for label, root, overrides in (
        ("greeter, no map", small, {"planning.repository_map.enabled": False}),
        ("greeter, with map", small, {}),
        ("10k repository, with map", big, {"planning.exploration.mode": "off"}),
    ):
        messages = planning_request(root, **overrides)
        total = sum(tokens(str(m["content"]), server) for m in messages)
        print(f"  {label:28} {total:5} tokens")
    shutil.rmtree(small)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--server", default=None)
    options = parser.parse_args()
    big = bench_map(options.files)
    try:
        bench_prompt(big, options.server)
    finally:
        shutil.rmtree(big)


if __name__ == "__main__":
    main()
