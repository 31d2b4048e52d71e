"""Cost of keeping secrets out of reach, and of the pre-commit path policy.

    python3 scripts/dev.py bench      (or: .venv/bin/python benchmarks/bench_isolation.py)

(a) run_command (`true`): plain Popen, CommandTool without a user switch (allow-listed
    environment, process-group kill) and, when run as root, with the switch to an
    unprivileged user (Popen's user/group arguments).
(b) MCP start-up: a stdio server (tests/mcp_servers/misbehaving.py) started and listed, with and
    (as root) without the launcher that switches the user (python -I drop_privileges.py).
(c) enforce_commit_policy on a repository of 10,000 files: nothing staged, 100 changed files,
    and all 10,000 files staged at once (secret scanning on, one registered secret).
(d) redaction with 6 registered secrets: a 200 KB prompt (known values only, as llm.py does),
    a 20 KB tool result (with the token and URL patterns, as the registry does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.timing import median_ms
from planner.ci.branch.commit_policy import enforce_commit_policy
from planner.config import ToolsConfig
from planner.text.redaction import redact, redact_data, register_secret
from planner.tools.commands.run_command import CommandTool
from planner.tools.mcp.host import McpHost
from planner.tools.sandbox.isolation import SandboxUser
from planner.tools.sandbox.safe_env import git_environment
from tests.mcp_servers.launch import misbehaving_server

AS_ROOT = os.geteuid() == 0


def reachable_directory() -> Path:
    base = Path(tempfile.mkdtemp(prefix="planner-bench-"))
    base.chmod(0o755)
    return base


def bench_run_command(root: Path) -> None:
    config = ToolsConfig(allowed_commands=["true"])
    plain = median_ms(lambda: subprocess.run(["true"], cwd=root, check=True), 50)
    tool = CommandTool(root, config)
    isolated = median_ms(lambda: tool.call("run_command", {"argv": ["true"]}), 50)
    print(f"run_command `true`: plain Popen {plain:.2f} ms, CommandTool {isolated:.2f} ms")
    if AS_ROOT:
        user = SandboxUser(65534, 65534, tempfile.mkdtemp())
        switched = CommandTool(root, config, sandbox=user)
        ms = median_ms(lambda: switched.call("run_command", {"argv": ["true"]}), 50)
        print(f"run_command `true` as uid 65534: {ms:.2f} ms (+{ms - isolated:.2f} ms)")


def mcp_start(root: Path, user: SandboxUser | None) -> None:
    from planner.config import McpServerConfig

    server = McpServerConfig.model_validate(misbehaving_server())
    host = McpHost({"m": server}, ToolsConfig(), root, user)
    try:
        [started] = host.start()
        assert started.problem is None, started.problem
    finally:
        host.close()


def bench_mcp(root: Path) -> None:
    plain = median_ms(lambda: mcp_start(root, None), 5)
    print(f"MCP stdio server start + list: {plain:.0f} ms")
    if AS_ROOT:
        user = SandboxUser(65534, 65534, tempfile.mkdtemp())
        switched = median_ms(lambda: mcp_start(root, user), 5)
        print(f"the same as uid 65534 (launcher): {switched:.0f} ms (+{switched - plain:.0f} ms)")


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def bench_commit_policy(base: Path) -> None:
    root = base / "repo"
    (root / "src").mkdir(parents=True)
    for n in range(10_000):
        (root / "src" / f"f{n:05}.txt").write_text(f"line {n}\n" * 20)
    git(root, "init", "-q", "-b", "main")
    env = git_environment(os.environ)
    register_secret("bench-secret-value-0123456789")
    git(root, "add", "-A")
    all_staged = median_ms(lambda: enforce_commit_policy(root, env), 3)
    git(root, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "base")
    nothing = median_ms(lambda: enforce_commit_policy(root, env), 5)
    for n in range(100):
        (root / "src" / f"f{n:05}.txt").write_text("changed\n")
    git(root, "add", "-A")
    hundred = median_ms(lambda: enforce_commit_policy(root, env), 5)
    print(
        "commit policy, 10,000-file repository: "
        f"nothing staged {nothing:.0f} ms, 100 changed files {hundred:.0f} ms, "
        f"all 10,000 files staged {all_staged:.0f} ms"
    )


def bench_redaction() -> None:
    for n in range(6):
        register_secret(f"secret-value-{n}-abcdefghijklmnop")
    prompt = [{"role": "user", "content": "lorem ipsum dolor sit amet " * 8_000}]
    known = median_ms(lambda: redact_data(prompt, patterns=False), 20)
    output = "test_a.py::test_b PASSED https://example.com/x\n" * 400
    full = median_ms(lambda: redact(output), 50)
    print(f"redaction: 200 KB prompt {known:.1f} ms, 20 KB tool result {full:.1f} ms")


def main() -> None:
    base = reachable_directory()
    try:
        bench_run_command(base)
        bench_mcp(base)
        bench_commit_policy(base)
        bench_redaction()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
