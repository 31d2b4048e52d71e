"""Tool-call overhead through the ToolRegistry, and MCP server start-up time.

    python benchmarks/bench_tools.py [--calls 200] [--starts 5]

Prints figures; it is not a test. Built-in: read_file of a small file. stdio MCP: `echo` of our
own server (tests/mcp_servers/misbehaving.py, Python), `git_status` of mcp-server-git, and
`read_text_file` of @modelcontextprotocol/server-filesystem (node, if tests/node is installed).
Start-up: build_registry() with one server until its tools are listed, and close().
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing planner

from planner.config import ToolsConfig  # noqa: E402
from planner.tools.build import build_registry  # noqa: E402
from planner.tools.registry import ToolRegistry  # noqa: E402

MISBEHAVING = ROOT / "tests" / "mcp_servers" / "misbehaving.py"
FILESYSTEM = ROOT / "tests/node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"


def servers() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {
        "own": {"command": sys.executable, "args": [str(MISBEHAVING)]},
        "git": {"command": sys.executable, "args": ["-m", "mcp_server_git", "--repository", "."]},
    }
    if shutil.which("node") and FILESYSTEM.is_file():
        found["fs"] = {"command": "node", "args": [str(FILESYSTEM), "."]}
    return found


LABELS = {
    "own": "own (Python, tests/mcp_servers)",
    "git": "mcp-server-git (Python)",
    "fs": "server-filesystem (node)",
}
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "built-in read_file": ("read_file", {"path": "README.md"}),
    "stdio MCP own__echo (Python)": ("own__echo", {"text": "ping"}),
    "stdio MCP git__git_status (Python)": ("git__git_status", {"repo_path": "."}),
    "stdio MCP fs__read_text_file (node)": ("fs__read_text_file", {"path": "README.md"}),
}


def make_repo(root: Path) -> Path:
    (root / "README.md").write_text("# bench\n\nA small file.\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    return root


def registry(workspace: Path, chosen: dict[str, dict[str, Any]]) -> ToolRegistry:
    return build_registry(ToolsConfig.model_validate({"mcpServers": chosen}), workspace, env={})


def per_call_ms(action: Callable[[], object], calls: int) -> tuple[float, float]:
    """(median, p95) milliseconds per call, after 10 warm-up calls."""
    for _ in range(10):
        action()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def bench_calls(workspace: Path, calls: int) -> None:
    tools = registry(workspace, servers())
    try:
        print(f"tool-call overhead through the registry ({calls} calls each, ms per call)")
        for label, (name, arguments) in CALLS.items():
            if name not in tools.names():
                print(f"  {label:40s} skipped (server not available)")
                continue
            assert tools.call(name, arguments).ok, name
            median, p95 = per_call_ms(lambda n=name, a=arguments: tools.call(n, a), calls)
            print(f"  {label:40s} median {median:7.3f}   p95 {p95:7.3f}")
    finally:
        tools.close()


def bench_startup(workspace: Path, starts: int) -> None:
    print(f"MCP server start-up (build_registry until tools are listed; median of {starts})")
    for name, config in servers().items():
        up, down = [], []
        for _ in range(starts):
            started = time.perf_counter()
            tools = registry(workspace, {name: config})
            up.append(time.perf_counter() - started)
            assert not tools.problems, tools.problems
            started = time.perf_counter()
            tools.close()
            down.append(time.perf_counter() - started)
        print(
            f"  {LABELS[name]:40s} start {statistics.median(up) * 1000:7.1f} ms   "
            f"close {statistics.median(down) * 1000:6.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--starts", type=int, default=5)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as directory:
        workspace = make_repo(Path(directory))
        bench_calls(workspace, options.calls)
        bench_startup(workspace, options.starts)


if __name__ == "__main__":
    main()
