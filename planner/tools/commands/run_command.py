"""run_command: an allow-listed argv, run in the workspace with an environment free of secrets.

The environment is an allow-list (planner.tools.sandbox.safe_env), and when planner runs as root
the command runs as an unprivileged user (planner.tools.sandbox.isolation), so it cannot read the
secrets in the environment or memory of planner or of the CI job's processes either.

Never a shell string: the model sends an argv list, and it runs only when it starts with one of
`tools.allowed_commands`. The command gets its own session and process group; when it exits or
times out, the group and whatever else is left in its session are killed, so nothing it started
outlives it unless it started a session of its own (setsid); output goes to temporary files
(no pipe can fill up and block it) and comes back cut to `tools.max_output_bytes` per stream
with the real sizes noted. Commands get a temporary folder (TMPDIR) of the tool's own, removed
when the tool closes: a command neither fills nor cleans the machine's shared one (a repository's
pytest deletes the old `tmp_path` roots it finds there when it exits, other jobs' on a long-lived
runner).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.config import ToolsConfig
from planner.core.interfaces import ToolResult, ToolSpec
from planner.outcome.deadline import bounded
from planner.tools import arguments as args
from planner.tools.arguments import BadArguments
from planner.tools.output import cap_file
from planner.tools.sandbox.isolation import SandboxUser, private_folder
from planner.tools.sandbox.leftovers import process_table
from planner.tools.sandbox.safe_env import scrubbed_environment


@dataclass
class Finished:
    exit_code: int | None
    stdout: tuple[int, str]
    stderr: tuple[int, str]
    timed_out: bool


class CommandTool:
    """The run_command tool; offered only when some command prefix is allowed."""

    def __init__(
        self,
        root: Path,
        config: ToolsConfig,
        env: Mapping[str, str] | None = None,
        sandbox: SandboxUser | None = None,
        temporary: Path | None = None,
    ) -> None:
        self.root = root.resolve()
        self.config = config
        self.prefixes = config.command_prefixes
        self.env = scrubbed_environment(os.environ if env is None else env, config.env_passthrough)
        self.sandbox = sandbox
        """The unprivileged user commands run as (planner runs as root), or None."""
        if sandbox is not None:
            self.env.update(sandbox.environment())
        self.temporary = temporary
        """The commands' TMPDIR: the owner's when given (the owner removes it), else one made
        at the first command and removed at close."""
        self._made: Path | None = None

    def list_tools(self) -> list[ToolSpec]:
        return [self._spec()] if self.prefixes else []

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name != "run_command":
            return ToolResult(ok=False, error=f"unknown command tool {name!r}")
        try:
            argv = args.string_list(arguments, "argv")
        except BadArguments as exc:
            return ToolResult(ok=False, error=f"bad arguments for run_command: {exc}")
        if not self._allowed(argv):
            return ToolResult(ok=False, error=self._refusal(argv))
        try:
            finished = self._run(argv)
        except OSError as exc:
            return ToolResult(ok=False, error=f"could not start {argv[0]!r}: {exc.strerror or exc}")
        return self._result(finished)

    def close(self) -> None:
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self.temporary = self._made = None

    def _temporary_folder(self) -> Path:
        if self.temporary is None:
            self.temporary = self._made = private_folder("planner-command-tmp-", self.sandbox)
        return self.temporary

    def run_argv(self, argv: list[str]) -> Finished:
        """Run `argv` exactly as run_command runs an allowed one (environment, user, process
        group, timeout, output cap), without the allow-list: for the commands the maintainer
        configured or planner detected (planner.verification), never for the model's own.
        Raises OSError when the program cannot be started."""
        return self._run(argv)

    def _allowed(self, argv: list[str]) -> bool:
        return allowed_argv(argv, self.prefixes)

    def _refusal(self, argv: list[str]) -> str:
        allowed = "; ".join(" ".join(prefix) for prefix in self.prefixes)
        return f"refused {argv!r}: rule 'command-allow-list' (allowed prefixes: {allowed})"

    def _run(self, argv: list[str]) -> Finished:
        argv, switch = self.sandbox.start(argv) if self.sandbox else (argv, {})
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            process = subprocess.Popen(
                argv,
                cwd=self.root,
                env={**self.env, "TMPDIR": str(self._temporary_folder())},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                **switch,
            )
            timed_out = not _wait(process, bounded(self.config.command_timeout_seconds))
            limit = self.config.max_output_bytes
            return Finished(
                process.returncode,
                cap_file(out, limit, "stdout"),
                cap_file(err, limit, "stderr"),
                timed_out,
            )

    def _result(self, finished: Finished) -> ToolResult:
        (out_size, out), (err_size, err) = finished.stdout, finished.stderr
        content = (
            f"exit code: {finished.exit_code}\n"
            f"--- stdout ({out_size} bytes) ---\n{out}\n"
            f"--- stderr ({err_size} bytes) ---\n{err}"
        )
        if finished.timed_out:
            timeout = self.config.command_timeout_seconds
            error = f"timed out after {timeout:g}s; the command and its children were killed"
            return ToolResult(ok=False, error=error, content=content)
        if finished.exit_code != 0:
            return ToolResult(
                ok=False, error=f"command exited with code {finished.exit_code}", content=content
            )
        return ToolResult(ok=True, content=content)

    def _spec(self) -> ToolSpec:
        allowed = "; ".join(" ".join(prefix) for prefix in self.prefixes)
        return ToolSpec(
            name="run_command",
            description=(
                "Run a command (argv list, no shell) in the repository and get its exit code "
                f"and output. Allowed command prefixes: {allowed}. "
                f"Timeout {self.config.command_timeout_seconds:g}s."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "argv": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": 'Program and arguments, e.g. ["python", "-m", "pytest"]',
                    }
                },
                "required": ["argv"],
            },
        )


def _wait(process: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the command, then kill what is left of its process group. False on timeout.

    Background children die too: left running, they could read the environment of whatever
    planner starts next (/proc/<pid>/environ of a git push, say). The leader is reaped only
    after the kill, so the group's id cannot have been given to another process meanwhile.
    """
    finished = _exited(process.pid, timeout)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    _kill_session(process.pid)
    process.wait()
    return finished


def _kill_session(session: int) -> None:
    """Kill what is left of the command's session (its id is the unreaped leader's pid): a
    child that moved to a process group of its own (a shell's background job) is still in it.
    One that starts a session of its own (setsid) is not; what it changes later is judged
    before anything is committed (planner.approval.effects.EffectGuard.settle)."""
    for pid in _session_members(session):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _session_members(session: int) -> list[int]:
    """Processes in `session`, from /proc (none where there is no /proc, e.g. macOS)."""
    return [process.pid for process in process_table().values() if process.session == session]


def _exited(pid: int, timeout: float) -> bool:
    """Whether our child `pid` exits within `timeout`; it stays unreaped (a zombie) either way."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux 5.3+: poll instead
        return _polled_exit(pid, timeout)
    try:
        return bool(select.select([handle], [], [], timeout)[0])
    finally:
        os.close(handle)


def _polled_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(0.05, remaining))
    return True


def allowed_argv(argv: Sequence[str], prefixes: Sequence[tuple[str, ...]]) -> bool:
    """The command-allow-list rule: `argv` starts with one of the allowed prefixes."""
    return any(tuple(argv[: len(prefix)]) == prefix for prefix in prefixes)
