"""Running the setup and the test command, through run_command's own runner.

The commands run exactly as the model's run_command does
(planner.tools.commands.run_command.CommandTool): an allow-listed environment without any token, the
unprivileged sandbox user when planner runs as root, their own process group killed at the timeout,
output cut to a cap. Python repositories get a virtual environment of their own, outside the
workspace, first on PATH for the setup and the tests, so their packages never land in planner's
environment.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import weakref
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from planner.config import PlannerConfig
from planner.core.interfaces import ToolResult
from planner.outcome.deadline import bounded, expired
from planner.outcome.evidence import TestRun
from planner.text.issue import sanitize_untrusted
from planner.text.redaction import redact
from planner.tools.commands.run_command import CommandTool, Finished
from planner.tools.sandbox.isolation import SandboxUser, private_folder
from planner.verification.suite.declared import applies, names_runner
from planner.verification.suite.detect import PYTHON, Verification, provision_steps
from planner.verification.suite.parse import parse_output, service_problem

GUIDE = "docs/verification.md"
RUNNER_MODULE = "pytest"
PROBE_SECONDS = 60.0
"""How long the check whether the tests' interpreter imports pytest may take."""
PROVISIONED = "installed into the verification's own environment"
SOURCE_LAYOUT = "the project's package under src/ is not installed where the tests run"
CHECK_SECONDS = 120.0
"""How long the import of the changed modules may take."""
PAST_DEADLINE = (
    "not started: the pass's deadline was reached (budget.max_wall_seconds, less "
    "budget.finish_reserve_seconds)"
)
MARKER_PROBE = (
    "import json, os, platform, sys\n"
    "i = sys.implementation\n"
    "v = i.version\n"
    "level = '' if v.releaselevel == 'final' else v.releaselevel[0] + str(v.serial)\n"
    "print(json.dumps({'implementation_name': i.name,\n"
    "  'implementation_version': f'{v.major}.{v.minor}.{v.micro}{level}',\n"
    "  'os_name': os.name, 'platform_machine': platform.machine(),\n"
    "  'platform_release': platform.release(), 'platform_system': platform.system(),\n"
    "  'platform_version': platform.version(),\n"
    "  'python_full_version': platform.python_version(),\n"
    "  'platform_python_implementation': platform.python_implementation(),\n"
    "  'python_version': '.'.join(platform.python_version_tuple()[:2]),\n"
    "  'sys_platform': sys.platform}))\n"
)
"""Prints the interpreter's environment-marker values, as packaging computes them."""


Watch = Callable[[str, list[str], Callable[[], ToolResult], str], ToolResult]
"""Runs a command under the approval gate's effect check (ApprovalGate.watched): the tests run
code the model may have written (conftest.py, package.json scripts), so what they do to the
working tree is judged like run_command's effects."""


Around = Callable[[], AbstractContextManager[object]]
"""What holds a test run (a file placed for it and taken away after)."""


class EffectRolledBack(Exception):
    """What the command did needed a person and was undone; its output does not count."""


@dataclass
class SetupResult:
    command: str
    ok: bool
    detail: str


class TestRunner:
    """Runs one repository's verification commands under the pass's sandbox rules."""

    __test__ = False

    def __init__(
        self,
        workspace: Path,
        config: PlannerConfig,
        sandbox: SandboxUser | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.sandbox = sandbox
        self.watch = watch
        self.venv: Path | None = None
        self.source_folder: Path | None = None
        """A `src` folder on the tests' PYTHONPATH (use_source_layout())."""
        self._temporary: Path | None = None
        self.runner_problem = ""
        """Why the tests' interpreter still lacks pytest after the setup ("" unless so)."""

    # -- setup -------------------------------------------------------------------------------

    def set_up(self, found: Verification) -> list[SetupResult]:
        """Run the setup commands in order; stop at the first that fails."""
        results: list[SetupResult] = []
        if found.python and found.setup:
            results.append(self._make_venv())
        for argv in found.setup:
            if results and not results[-1].ok:
                break
            results.append(self._setup_step(self._python_tools(argv), shlex.join(argv)))
        return results

    def provision(self, found: Verification) -> list[SetupResult]:
        """pytest, when the tests' interpreter cannot import it: what the project declares
        with it (and the project itself) goes into the verification's own environment, made
        now when the setup made none. [] when pytest is there already."""
        if self.imports(RUNNER_MODULE):
            return []
        # Made here for pytest's tests, it leaves out the interpreter's own packages: they lack
        # pytest, and in the action's image they are planner's. unittest's tests ran with them
        # before and keep them (pytest is for the issue's test).
        shared = found.runner != "pytest"
        results = [] if self.venv is not None else [self._make_venv(system_packages=shared)]
        if results and not results[0].ok:
            return results
        environment = self.marker_environment()
        for argv in provision_steps(found, environment):
            label = f"{shlex.join(argv)} (pytest is not installed: {PROVISIONED})"
            results.append(self._setup_step(self._python_tools(argv), label))
        if all(result.ok for result in results) and not self.imports(RUNNER_MODULE):
            # Every install succeeded, yet there is no runner: a failed setup all the same
            self.runner_problem = _still_missing(found, environment or {})
            results.append(SetupResult("the test runner (pytest)", False, self.runner_problem))
        return results

    def marker_environment(self) -> dict[str, str] | None:
        """The environment-marker values (PEP 508) of the tests' `python3`, asked of it, as
        packaging.markers.default_environment() gives them for planner's own; None when it
        did not answer."""
        argv = [PYTHON, "-c", MARKER_PROBE]
        if self.missing_program(argv, "verification"):
            return None
        try:
            finished = self._tool(PROBE_SECONDS).run_argv(argv)
            values = json.loads(finished.stdout[1]) if finished.exit_code == 0 else None
        except (OSError, ValueError):
            return None
        if not isinstance(values, dict):
            return None
        return {str(key): str(value) for key, value in values.items()}

    def use_source_layout(self, found: Verification) -> SetupResult | None:
        """A project that keeps its package under `src/` and is not installed where the tests
        run (pytest was there already, so nothing was provisioned) gets `src` on the tests'
        PYTHONPATH, as pytest's `pythonpath = src` would: its tests import it like the issue's
        test. None when nothing was needed (or `src` does not help)."""
        source = self.workspace / "src"
        if not found.python or found.installs_project or not source.is_dir():
            return None
        packages = sorted(
            path.name
            for path in source.iterdir()
            if path.name.isidentifier() and (path / "__init__.py").is_file()
        )
        if not packages or all(self.imports(name) for name in packages):
            return None
        self.source_folder = source
        ok = all(self.imports(name) for name in packages)
        self.source_folder = source if ok else None
        detail = "" if ok else f"{', '.join(packages)} still did not import"
        return SetupResult(f"PYTHONPATH=src ({SOURCE_LAYOUT})", ok, detail)

    def imports(self, module: str) -> bool:
        """Whether the tests' `python3` imports `module` (a command of its own, like theirs)."""
        argv = [PYTHON, "-c", f"import {module}"]
        if self.missing_program(argv, "verification"):
            return False
        try:
            finished = self._tool(PROBE_SECONDS).run_argv(argv)
        except OSError:
            return False
        return finished.exit_code == 0 and not finished.timed_out

    def _make_venv(self, system_packages: bool = True) -> SetupResult:
        directory = self._folder("venv")
        shared = ["--system-site-packages"] if system_packages else []
        argv = [PYTHON, "-m", "venv", *shared, str(directory)]
        result = self._setup_step(argv, "a virtual environment for the tests")
        self.venv = directory if result.ok else None
        return result

    def _python_tools(self, argv: list[str]) -> list[str]:
        """`pip ...` is the virtual environment's pip, never planner's."""
        if self.venv is not None and argv[:1] in (["pip"], ["pip3"]):
            return [str(self.venv / "bin" / "python"), "-m", "pip", *argv[1:]]
        return argv

    def _setup_step(self, argv: list[str], label: str = "") -> SetupResult:
        shown = label or shlex.join(argv)
        timeout = self.config.verification.setup_timeout_seconds
        missing = PAST_DEADLINE if expired() else self.missing_program(argv, "verification.setup")
        if missing:
            return SetupResult(shown, False, missing)
        limit = bounded(timeout)
        try:
            finished = self._watched(argv, timeout, setup=True)
        except OSError as exc:
            return SetupResult(shown, False, f"could not start {argv[0]!r}: {exc}")
        except EffectRolledBack as undone:
            return SetupResult(shown, False, str(undone))
        if finished.timed_out and limit < timeout:
            return SetupResult(shown, False, _cut_at_deadline(limit))
        if finished.timed_out:
            return SetupResult(shown, False, f"timed out after {timeout:g}s and was killed")
        if finished.exit_code != 0:
            return SetupResult(shown, False, f"exit code {finished.exit_code}: {_tail(finished)}")
        return SetupResult(shown, True, "")

    # -- tests -------------------------------------------------------------------------------

    def run_tests(self, found: Verification, around: Around = nullcontext) -> TestRun:
        """One run of the test command, parsed; never raises for the command's sake. `around`
        holds the run (the issue's test placed in the tree): inside the effect check, so what
        it writes and takes away again is no change."""
        return self.run_argv(found.command, found.source, around)

    def run_argv(self, argv: list[str], source: str, around: Around = nullcontext) -> TestRun:
        """One run of `argv` (a test command from `source`), parsed, as run_tests()."""
        base = TestRun(command=shlex.join(argv))
        missing = PAST_DEADLINE if expired() else self.missing_program(argv, source)
        if missing:
            return base.model_copy(update={"reason": missing})
        timeout = self.config.verification.timeout_seconds
        limit = bounded(timeout)  # what it has, when the pass's deadline comes first
        try:
            finished = self._watched(argv, timeout, around)
        except OSError as exc:
            reason = f"could not start {argv[0]!r} ({source}): {exc}"
            return base.model_copy(update={"reason": reason})
        except EffectRolledBack as undone:
            return base.model_copy(update={"reason": str(undone)})
        return self._test_run(base, finished, timeout, limit)

    def run_program(
        self, argv: list[str], source: str, around: Around = nullcontext
    ) -> tuple[str, str]:
        """`argv` run like the tests (a check of the change): its whole output, and why it
        did not run ("" when it ran)."""
        missing = PAST_DEADLINE if expired() else self.missing_program(argv, source)
        if missing:
            return "", missing
        timeout = min(self.config.verification.timeout_seconds, CHECK_SECONDS)
        try:
            finished = self._watched(argv, timeout, around)
        except (OSError, EffectRolledBack) as exc:
            return "", f"{source} could not run: {exc}"
        if finished.timed_out:
            return "", f"{source} timed out after {timeout:g}s"
        return f"{finished.stdout[1]}\n{finished.stderr[1]}", ""

    def _watched(
        self, argv: list[str], timeout: float, around: Around = nullcontext, setup: bool = False
    ) -> Finished:
        """`argv` run under the effect check when there is one; raises EffectRolledBack when
        what it did was undone (AwaitingApproval and EffectNotUndone pass through)."""
        if self.watch is None:
            with around():
                return self._tool(timeout, setup).run_argv(argv)
        ran: list[Finished] = []

        def start() -> ToolResult:
            with around():
                ran.append(self._tool(timeout, setup).run_argv(argv))
            return ToolResult(ok=True)

        result = self.watch("verification", argv, start, f"verification: {shlex.join(argv)}")
        if not result.ok or not ran:
            raise EffectRolledBack(f"{shlex.join(argv)}: {result.error or 'not run'}")
        return ran[0]

    def _test_run(self, base: TestRun, finished: Finished, timeout: float, had: float) -> TestRun:
        """`finished` read as a test run; `had`: the seconds it was given (less than
        `timeout` when the pass's deadline came first)."""
        text = f"{finished.stdout[1]}\n{finished.stderr[1]}"
        parsed = parse_output(text)
        limit = self.config.verification.max_feedback_chars
        fields = {
            "exit_code": finished.exit_code,
            "passed": parsed.passed,
            "failed": parsed.failed,
            "failing": [redact(name) for name in parsed.failing],
            "tail": _tail(finished, limit),
            "note": _service_note(text) if finished.exit_code not in (None, 0) else "",
        }
        if finished.timed_out:
            reason = f"timed out after {timeout:g}s (verification.timeout_seconds); killed"
            reason = _cut_at_deadline(had) if had < timeout else reason
            return base.model_copy(update={**fields, "status": "timed_out", "reason": reason})
        missing_runner = _missing_python_runner(text, finished.exit_code, self.runner_problem)
        if missing_runner:
            return base.model_copy(update={**fields, "status": "not_run", "reason": missing_runner})
        if finished.exit_code == 0 and parsed.passed == 0 and not parsed.failed:
            reason = "the test command ran no test"  # unittest's "Ran 0 tests … OK"
            return base.model_copy(update={**fields, "status": "not_run", "reason": reason})
        status = "passed" if finished.exit_code == 0 else "failed"
        return base.model_copy(update={**fields, "status": status})

    # -- shared ------------------------------------------------------------------------------

    def missing_program(self, argv: list[str], source: str) -> str:
        """Why `argv` cannot run here ('' when its program is found)."""
        program = argv[0]
        if os.sep in program or shutil.which(program, path=self._path()):
            return ""
        where = "set verification.command" if source != "verification.command" else "fix it"
        return (
            f"`{program}` is not installed where planner runs, so `{shlex.join(argv)}` "
            f"({source}) did not run. Run planner after your workflow's own setup steps "
            f"(see {GUIDE}) or {where}."
        )

    def _tool(self, timeout: float, setup: bool = False) -> CommandTool:
        tools = self.config.tools.model_copy(
            update={
                "command_timeout_seconds": timeout,
                "max_output_bytes": self.config.verification.max_output_bytes,
            }
        )
        tool = CommandTool(
            self.workspace, tools, sandbox=self.sandbox, temporary=self._temporary_folder()
        )
        tool.env.update(self._venv_variables(tool.env.get("PATH", "")))
        if self.source_folder is not None:
            paths = [str(self.source_folder), tool.env.get("PYTHONPATH", "")]
            tool.env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
        tool.env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ for the commit to pick up
        if setup:
            tool.env.update(self._pip_variables())
        return tool

    def _pip_variables(self) -> dict[str, str]:
        """verification.index_url and find_links, as pip reads them from its environment (so
        a setup's own `pip install` follows them too)."""
        settings = self.config.verification
        variables = {"PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        if settings.index_url:
            variables["PIP_INDEX_URL"] = settings.index_url
        if settings.find_links:
            variables["PIP_FIND_LINKS"] = " ".join(settings.find_links)
            if not settings.index_url:
                variables["PIP_NO_INDEX"] = "1"
        return variables

    def _temporary_folder(self) -> Path:
        """TMPDIR for the setup and the tests, one per pass and gone with it: a repository's
        test runner neither fills nor cleans the machine's shared one (pytest deletes the old
        `tmp_path` roots it finds there when it exits: other jobs' on a long-lived runner)."""
        if self._temporary is None:
            self._temporary = self._folder("tmp")
        return self._temporary

    def _folder(self, purpose: str) -> Path:
        """A new folder outside the repository that the commands' user owns; gone with the
        pass (this runner), so a long-lived process does not collect them."""
        directory = private_folder(f"planner-verification-{purpose}-", self.sandbox)
        weakref.finalize(self, shutil.rmtree, directory, True)
        return directory

    def _venv_variables(self, path: str) -> dict[str, str]:
        if self.venv is None:
            return {}
        return {
            "PATH": f"{self.venv / 'bin'}{os.pathsep}{path}",
            "VIRTUAL_ENV": str(self.venv),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }

    def _path(self) -> str:
        path = os.environ.get("PATH", os.defpath)
        return self._venv_variables(path).get("PATH", path)


def _cut_at_deadline(seconds: float) -> str:
    return (
        f"stopped at the pass's deadline after {seconds:g}s (budget.max_wall_seconds, less "
        "budget.finish_reserve_seconds); killed"
    )


def _tail(finished: Finished, limit: int = 1_500) -> str:
    """The end of the output, without any known secret and without what a person cannot see
    but a model would read (it goes into prompts and the history). pytest's summary lines are
    cut as pytest cuts them in a terminal: in CI (`CI` set, as every GitHub and GitLab job
    has it) it writes each failure's whole message there, and a long one filled the end
    that is kept, leaving out the assertion above it."""
    text = f"{finished.stdout[1].rstrip()}\n{finished.stderr[1].rstrip()}".strip()
    text = SUMMARY_LINE.sub(_short_summary, text)
    return sanitize_untrusted(redact(text[-limit:]), limit * 4)


SUMMARY_LINE = re.compile(r"^((?:FAILED|ERROR) \S+ - )(.*)$", re.MULTILINE)
SUMMARY_MESSAGE_CHARS = 120
"""Characters of a failure's message a summary line keeps (pytest's terminal width, about)."""


def _short_summary(line: re.Match[str]) -> str:
    message = line.group(2)
    if len(message) <= SUMMARY_MESSAGE_CHARS:
        return line.group(0)
    return f"{line.group(1)}{message[:SUMMARY_MESSAGE_CHARS]}..."


def _service_note(text: str) -> str:
    return sanitize_untrusted(redact(service_problem(text)), 1_000)


def _still_missing(found: Verification, environment: Mapping[str, str]) -> str:
    """Why pytest is still missing when every install of the setup succeeded."""
    skipped = [
        text
        for text in found.declared.requirements
        if names_runner(text) and not applies(text, environment)
    ]
    python = environment.get("python_full_version", "")
    where = f"the tests' interpreter (Python {python})" if python else "the tests' interpreter"
    why = f"; left out by their markers: {', '.join(skipped)}" if skipped else ""
    return (
        f"the setup ended without errors, but {where} still cannot import pytest{why}: "
        "set verification.setup to install it"
    )


def _missing_python_runner(text: str, exit_code: int | None, problem: str = "") -> str:
    """pytest not installed reads like a failure of every test: it is not one."""
    if exit_code not in (None, 0) and "No module named pytest" in text and problem:
        return f"pytest is not installed for the tests: {problem}"
    if exit_code not in (None, 0) and "No module named pytest" in text:
        return (
            "pytest is not installed for the tests, and planner could not install it (see the "
            "setup's problems): give pip a package source (verification.index_url or "
            "verification.find_links) or set verification.setup"
        )
    return ""


def merged(main: TestRun | None, issue: TestRun | None) -> TestRun:
    """The repository's tests and the issue's test, run apart, as one run: the counts added,
    the failing names of both, the output of the one that failed. The command shown is the
    repository's; a run of the issue's test alone stands for itself."""
    if main is None or not main.ran:
        return issue if issue is not None else main or TestRun()
    if issue is None:
        return main
    failed = main.status == "failed" or issue.status == "failed"
    status = "timed_out" if "timed_out" in (main.status, issue.status) else main.status
    if status != "timed_out" and failed:
        status = "failed"
    shown = issue if issue.status != "passed" and main.status == "passed" else main
    counted = [run for run in (main, issue) if run.passed is not None or run.failed is not None]
    return main.model_copy(
        update={
            "status": status,
            "exit_code": shown.exit_code,
            "passed": sum(run.passed or 0 for run in counted) if counted else None,
            "failed": sum(run.failed or 0 for run in counted) if counted else None,
            "failing": [*main.failing, *issue.failing],
            "tail": shown.tail,
            "reason": main.reason or issue.reason,
        }
    )
