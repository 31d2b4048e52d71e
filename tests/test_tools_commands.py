"""run_command: allow-list, timeout kill, output caps, scrubbed environment, exit codes."""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest

from planner.config import ToolsConfig
from planner.tools.commands.run_command import CommandTool
from planner.tools.sandbox.safe_env import is_secret_name
from tests.support.stale_roots import ROOTS, SCRATCH_TEST, shared_temporary_folder

PYTHON = sys.executable


def command_tool(
    root: Path, *prefixes: str, env: dict[str, str] | None = None, **config: object
) -> CommandTool:
    settings = ToolsConfig.model_validate({"allowed_commands": list(prefixes), **config})
    return CommandTool(root, settings, env)


def python_prefix() -> str:
    return f"{shlex.quote(PYTHON)} -c"


def test_allowed_command_runs_in_the_workspace_and_returns_its_exit_code(tmp_path: Path) -> None:
    tool = command_tool(tmp_path, python_prefix())
    result = tool.call("run_command", {"argv": [PYTHON, "-c", "import os; print(os.getcwd())"]})
    assert result.ok
    assert result.content.splitlines()[:3] == [
        "exit code: 0",
        f"--- stdout ({len(str(tmp_path)) + 1} bytes) ---",
        str(tmp_path.resolve()),
    ]
    failing = tool.call("run_command", {"argv": [PYTHON, "-c", "import sys; sys.exit(3)"]})
    assert not failing.ok
    assert failing.error == "command exited with code 3"
    assert failing.content.startswith("exit code: 3\n")


def test_commands_outside_the_allow_list_are_refused_naming_the_rule(tmp_path: Path) -> None:
    tool = command_tool(tmp_path, "git status", "python -m pytest")
    for argv in (
        ["rm", "-rf", "."],
        ["git", "push"],
        ["python", "-m", "pip", "install", "x"],
        ["git"],
    ):
        result = tool.call("run_command", {"argv": argv})
        assert not result.ok
        assert result.error == (
            f"refused {argv!r}: rule 'command-allow-list' "
            "(allowed prefixes: git status; python -m pytest)"
        )


def test_without_an_allow_list_run_command_is_not_offered(tmp_path: Path) -> None:
    tool = command_tool(tmp_path)
    assert tool.list_tools() == []
    result = tool.call("run_command", {"argv": ["ls"]})
    assert result.error is not None and "rule 'command-allow-list'" in result.error
    offered = command_tool(tmp_path, "make test").list_tools()
    assert [spec.name for spec in offered] == ["run_command"]
    assert "Allowed command prefixes: make test" in offered[0].description


def test_a_shell_string_is_not_accepted(tmp_path: Path) -> None:
    tool = command_tool(tmp_path, "echo")
    result = tool.call("run_command", {"argv": "echo hi; rm -rf /"})
    assert result.error == (
        "bad arguments for run_command: argument 'argv' must be a non-empty array of strings"
    )


def test_missing_program_is_reported(tmp_path: Path) -> None:
    tool = command_tool(tmp_path, "no-such-program-planner")
    result = tool.call("run_command", {"argv": ["no-such-program-planner", "--x"]})
    assert result.error == "could not start 'no-such-program-planner': No such file or directory"


def _dies(pid: int) -> bool:
    """True once `pid` is gone or a zombie; SIGKILL lands asynchronously, so poll (bounded)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "State:\tZ" in status:
            return True
        time.sleep(0.01)
    return False


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    tool = command_tool(tmp_path, python_prefix(), command_timeout_seconds=2)
    result = tool.call("run_command", {"argv": [PYTHON, "-c", script]})
    assert not result.ok
    assert result.error == "timed out after 2s; the command and its children were killed"
    assert "started" in result.content
    assert _dies(int((tmp_path / "child.pid").read_text()))


@pytest.mark.parametrize("waiting", ["pidfd", "polling"])
def test_background_children_do_not_outlive_a_command_that_exits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, waiting: str
) -> None:
    # A child left running could read /proc/<pid>/environ of whatever planner starts next.
    if waiting == "polling":  # as where os.pidfd_open is missing (macOS, old kernels)
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    assert_started_child_dies(tmp_path, "")


def assert_started_child_dies(tmp_path: Path, popen_arguments: str) -> None:
    """A command starts `sleep 600` (Popen with `popen_arguments`) and exits: the child dies."""
    script = (
        "import subprocess\n"
        f"child = subprocess.Popen(['sleep', '600']{popen_arguments})\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
    )
    tool = command_tool(tmp_path, python_prefix())
    result = tool.call("run_command", {"argv": [PYTHON, "-c", script]})
    assert result.ok
    child = int((tmp_path / "child.pid").read_text())
    try:
        assert _dies(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def test_a_child_in_a_process_group_of_its_own_does_not_outlive_the_command(
    tmp_path: Path,
) -> None:
    """Like a shell's background job (`set -m`): it leaves the command's process group, so a
    group kill misses it, but it stays in the command's session."""
    assert_started_child_dies(tmp_path, ", process_group=0")


def test_output_is_capped_with_sizes_noted(tmp_path: Path) -> None:
    script = "import sys; print('A' * 30000 + 'END'); sys.stderr.write('e' * 10)"
    tool = command_tool(tmp_path, python_prefix(), max_output_bytes=1000)
    result = tool.call("run_command", {"argv": [PYTHON, "-c", script]})
    assert result.ok
    assert "--- stdout (30004 bytes) ---" in result.content
    assert "[stdout: 30004 bytes, cut to the first and last 500 bytes]" in result.content
    assert "END\n" in result.content  # the tail is kept
    assert "--- stderr (10 bytes) ---\neeeeeeeeee" in result.content
    assert len(result.content) < 1300


def test_environment_is_scrubbed_of_tokens_and_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_TEST_FAKE_TOKEN", "ghp_fake0123456789")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_fake")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fake")
    monkeypatch.setenv("CI_JOB_TOKEN", "glcbt-fake")
    monkeypatch.setenv("DB_PASSWORD", "hunter2")
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", "ghs_input")
    monkeypatch.setenv("PLANNER_TEST_HARMLESS", "visible")
    monkeypatch.setenv("PLANNER_TEST_UNLISTED", "invisible")
    monkeypatch.setenv(
        "CI_REPOSITORY_URL", "https://gitlab-ci-token:glcbt-64_urltoken@gl.example/g/p"
    )
    script = "import os; print('\\n'.join(f'{k}={v}' for k, v in sorted(os.environ.items())))"
    tool = command_tool(tmp_path, python_prefix(), env_passthrough=["PLANNER_TEST_HARMLESS"])
    result = tool.call("run_command", {"argv": [PYTHON, "-c", script]})
    assert result.ok
    assert "PLANNER_TEST_HARMLESS=visible" in result.content
    assert "PATH=" in result.content
    # An allow-list, not a deny-list: a variable nobody named never arrives, whatever its name.
    for leaked in ("ghp_fake", "ghs_fake", "sk-fake", "glcbt-fake", "hunter2", "ghs_input"):
        assert leaked not in result.content
    assert "invisible" not in result.content and "urltoken" not in result.content


def test_env_passthrough_refuses_credential_names() -> None:
    """Attack: a config that passes the model key through to the commands the model runs."""
    for name in ("OPENAI_API_KEY", "NPM_TOKEN", "INPUT_GITHUB_TOKEN", "DB_PASSWORD"):
        with pytest.raises(ValueError, match="credentials are never passed to tools"):
            ToolsConfig.model_validate({"env_passthrough": [name]})


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("GITHUB_WORKSPACE", True),
        ("GITLAB_USER_LOGIN", True),
        ("ACTIONS_ID_TOKEN_REQUEST_URL", True),
        ("ACTIONS_RUNTIME_URL", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("npm_config__authToken", True),
        ("CI_JOB_JWT_V2", True),
        ("OPENAI_BASE_URL", True),
        ("my_credentials_file", True),
        ("PATH", False),
        ("HOME", False),
        ("LANG", False),
        ("CI", False),
        ("PYTHONPATH", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_allowed_commands_are_validated_as_command_lines() -> None:
    with pytest.raises(ValueError, match="cannot be split"):
        ToolsConfig.model_validate({"allowed_commands": ["'unclosed"]})
    with pytest.raises(ValueError, match="is empty"):
        ToolsConfig.model_validate({"allowed_commands": ["  "]})
    assert ToolsConfig(allowed_commands=["npm run 'unit tests'"]).command_prefixes == [
        ("npm", "run", "unit tests")
    ]


def test_env_argument_defaults_to_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANNER_TEST_MARKER", "from-os-environ")
    tool = command_tool(tmp_path, python_prefix(), env_passthrough=["PLANNER_TEST_MARKER"])
    script = "import os; print(os.environ.get('PLANNER_TEST_MARKER'))"
    assert "from-os-environ" in tool.call("run_command", {"argv": [PYTHON, "-c", script]}).content
    explicit = command_tool(
        tmp_path,
        python_prefix(),
        env={"PATH": os.environ["PATH"]},
        env_passthrough=["PLANNER_TEST_MARKER"],
    )
    assert "None" in explicit.call("run_command", {"argv": [PYTHON, "-c", script]}).content


def test_commands_get_a_temporary_folder_of_their_own_removed_at_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository's pytest whose tests use tmp_path, run with run_command, deletes when it
    exits every old numbered root but the last three under <temp>/pytest-of-<user>: on a
    long-lived runner, other jobs' folders. The commands get a folder of the tool's own."""
    shared, roots = shared_temporary_folder(tmp_path, monkeypatch)
    workspace = tmp_path / "repo"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "tests" / "test_scratch.py").write_text(SCRATCH_TEST, "utf-8")
    tool = command_tool(workspace, f"{shlex.quote(PYTHON)} -m pytest", python_prefix())

    tests = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    assert "1 passed" in tool.call("run_command", {"argv": tests}).content
    where = [PYTHON, "-c", "import tempfile; print(tempfile.gettempdir())"]
    folder = Path(tool.call("run_command", {"argv": where}).content.splitlines()[2])

    assert sorted(path.name for path in roots.iterdir()) == ROOTS
    assert folder.parent == shared and (folder / roots.name).is_dir()  # the run's own roots
    tool.close()
    assert sorted(path.name for path in shared.iterdir()) == [roots.name]
