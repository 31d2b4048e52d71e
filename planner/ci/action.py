"""The container's entry point (entrypoint.py calls main()): one CI job in, one exit code out.

GitHub (a Docker action) or GitLab (the CI/CD component, detected by GITLAB_CI=true):

1. mask every secret (GitHub's `::add-mask::`) before anything else is printed;
2. read the inputs (INPUT_*) and the config file, and decide from the event alone whether it
   concerns us: if not, say why in one line, write the outputs and exit 0. Only the standard
   library, pydantic and yaml are loaded by then; the model client, MCP and the forge code load
   after this point, so the skip path stays fast;
3. run planner.ci.job.run_for_event with the chosen history backend (it restores the history only
   once the event passed every skip check);
4. write the outputs ($GITHUB_OUTPUT, or a dotenv report on GitLab) and the job summary, and give
   the files created in the workspace back to its owner.

Exit codes: 0 for completed, in progress, waiting for a person, stopped and skipped; 1 for a
failure (already reported on the issue when the tracking comment existed); 2 for bad
configuration or input (reported before anything was written).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from planner.ci.inputs import (
    Settings,
    load_action_config,
    read_inputs,
    secret_values,
    settings_from,
)
from planner.ci.report.outputs import (
    Console,
    append_text,
    setup_logging,
    write_dotenv,
    write_github_outputs,
)
from planner.config import profile_settings
from planner.core.errors import PlannerError
from planner.text.redaction import register_environment_secrets
from planner.tools.sandbox.process import make_undumpable

log = logging.getLogger("planner.ci.action")

if TYPE_CHECKING:
    from planner.ci.events.triggers import Platform, Skip, Sweep, Trigger
    from planner.ci.outcome import CiOutcome
    from planner.config import PlannerConfig
    from planner.core.interfaces import HistoryBackend

DOTENV_FILE = "planner.env"
OUTPUT_NAMES = (
    "status",
    "issue_number",
    "pr_url",
    "branch",
    "comment_url",
    "tokens_used",
    "history_path",
)
CLOCK_SLACK_SECONDS = 2.0
"""File times come from a coarser clock than time.time(): count a little before the start."""


@dataclass
class Job:
    """One CI job: where it runs and what it was given."""

    platform: Platform
    env: dict[str, str]
    inputs: dict[str, str]
    console: Console
    started: float

    @property
    def workspace(self) -> Path:
        variable = "GITHUB_WORKSPACE" if self.platform == "github" else "CI_PROJECT_DIR"
        return Path(self.env.get(variable) or os.getcwd())


def main(env: Mapping[str, str] | None = None, stream: TextIO | None = None) -> int:
    started = time.time()
    environment = dict(os.environ if env is None else env)
    platform: Platform = "gitlab" if environment.get("GITLAB_CI") == "true" else "github"
    console = Console(stream or sys.stdout, platform)
    inputs = read_inputs(environment)
    console.mask(secret_values(inputs, environment))
    register_environment_secrets(environment)
    make_undumpable()  # before any thread or child: /proc/<planner>/environ|mem stay closed
    setup_logging(console)
    job = Job(platform, environment, inputs, console, started)
    try:
        return run(job)
    except PlannerError as exc:
        console.error(str(exc))
        write_outputs(job, bare_outputs("failed"))
        return exc.exit_code
    except Exception as exc:  # a bug: still say so in the log's terms and set the outputs
        console.error(f"planner failed unexpectedly: {type(exc).__name__}: {exc}")
        console.text(traceback.format_exc().rstrip())
        write_outputs(job, bare_outputs("failed"))
        return 1


def run(job: Job) -> int:
    settings = settings_from(job.inputs)
    config = load_action_config(settings, job.workspace, job.env)
    trigger, event, event_name = early_trigger(job, config)
    from planner.ci.events.triggers import Skip, Sweep

    if isinstance(trigger, Skip):
        return skip(job, trigger)
    if isinstance(trigger, Sweep):
        return sweep(job, config, trigger)
    from planner.model.llm import require_api_key, served_model

    config = load_action_config(settings, job.workspace, job.env, served_model)
    require_api_key(config.llm)  # exit 2 before any comment, label or branch is written
    trust_workspace(job.workspace)
    try:
        with job.console.group(f"planner: {trigger.describe()}"):
            backend = history_backend(job, settings, trigger)
            outcome = act(job, config, backend, event, event_name)
        report(job, config, settings, backend, trigger, outcome)
    finally:
        from planner.ci.ownership import give_back

        give_back(job.workspace, job.started - CLOCK_SLACK_SECONDS)
    from planner.ci.durability.signals import leave_if_cancelled

    leave_if_cancelled(outcome.exit_code)
    return outcome.exit_code


# -- before the skip decision ------------------------------------------------------------------


def early_trigger(
    job: Job, config: PlannerConfig
) -> tuple[Trigger | Skip | Sweep, dict[str, Any] | None, str | None]:
    """The event's trigger (or why it is skipped), decided from the event alone."""
    from planner.ci.events import triggers

    if job.platform == "github":
        from planner.ci.events import github

        name, payload = github.load_github_event(job.env)
        found = github.parse_github_event(
            name,
            payload,
            config.forge,
            act_on_changes_requested=config.review.act_on_changes_requested,
        )
        return found, payload, name
    from planner.ci.events import gitlab

    if job.env.get("TRIGGER_PAYLOAD"):
        payload = triggers.load_json_file(job.env["TRIGGER_PAYLOAD"], "TRIGGER_PAYLOAD")
        return gitlab.parse_gitlab_event(payload, config.forge), payload, None
    return gitlab.gitlab_trigger_from_env(job.env, config.forge), None, None


def skip(job: Job, reason: Skip) -> int:
    """One line saying why, the outputs, exit 0: no API request, no history touched."""
    job.console.say(f"skipped: {reason.reason}")
    write_outputs(job, bare_outputs("skipped"))
    summary = job.env.get("GITHUB_STEP_SUMMARY")
    if job.platform == "github" and summary:
        append_text(Path(summary), f"### planner: ⏭️ skipped\n\n{reason.reason}\n")
    return 0


def sweep(job: Job, config: PlannerConfig, trigger: Sweep) -> int:
    """A scheduled run: start a run on every issue whose wait is over (no model, no history)."""
    from planner.ci.handlers.sweep import run_sweep

    env = dict(job.env)
    if job.platform == "github":
        env["GITHUB_TOKEN"] = github_token(job)
    with job.console.group(f"planner: sweep ({trigger.event})"):
        report = run_sweep(job.platform, env, config)
    for line in report.lines:
        job.console.say(line)
    write_outputs(job, bare_outputs("swept"))
    return report.exit_code


# -- acting ------------------------------------------------------------------------------------


def trust_workspace(workspace: Path) -> None:
    """The workspace belongs to another user than the container's: tell git to work in it."""
    listed = subprocess.run(
        ["git", "config", "--global", "--get-all", "safe.directory"],
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    if str(workspace) in listed:
        return
    added = subprocess.run(
        ["git", "config", "--global", "--add", "safe.directory", str(workspace)],
        capture_output=True,
        text=True,
    )
    if added.returncode != 0:  # git may still work: the workspace can be the container user's
        log.warning(
            "could not mark %s as a safe git directory: %s", workspace, added.stderr.strip()
        )


def history_backend(job: Job, settings: Settings, trigger: Trigger) -> HistoryBackend:
    """The backend the history_backend input names (constructing it makes no request)."""
    from planner import storage

    env = job.env
    if job.platform == "github":
        return storage.history_backend(
            settings.history_backend,
            api_url=env.get("GITHUB_API_URL") or "https://api.github.com",
            repository=env.get("GITHUB_REPOSITORY") or trigger.repository,
            token=github_token(job),
        )
    jobs = storage.PlannerJobs(
        api_url=env.get("CI_API_V4_URL") or "",
        project=env.get("CI_PROJECT_ID") or trigger.project_id,
        token=env.get("GITLAB_TOKEN", ""),
        job_name=env.get("CI_JOB_NAME") or "planner",
        project_dir=job.workspace,
        current_job=env.get("CI_JOB_ID", ""),
    )
    return storage.gitlab_history_backend(settings.history_backend, jobs)


def github_token(job: Job) -> str:
    return job.inputs["github_token"] or job.env.get("GITHUB_TOKEN", "")


def act(
    job: Job,
    config: PlannerConfig,
    backend: HistoryBackend,
    event: dict[str, Any] | None,
    event_name: str | None,
) -> CiOutcome:
    from planner.ci.durability import signals
    from planner.ci.job import run_for_event

    signals.install()  # cancellation ends the pass cleanly (commit, push, comment)
    signals.mark_job_start(job.started)  # the deadline starts once the lease is taken
    env = dict(job.env)
    if job.platform == "github":
        env["GITHUB_TOKEN"] = github_token(job)
    return run_for_event(
        job.platform,
        workspace=job.workspace,
        config=config,
        env=env,
        event=event,
        event_name=event_name,
        history=backend,
    )


# -- after the run -----------------------------------------------------------------------------


def report(
    job: Job,
    config: PlannerConfig,
    settings: Settings,
    backend: HistoryBackend,
    trigger: Trigger,
    outcome: CiOutcome,
) -> None:
    from planner.ci.report.summary import (
        SummaryFacts,
        open_history,
        relative_history_path,
        render_summary,
    )
    from planner.run.runner import history_directory

    directory = history_directory(config, job.workspace)
    history = open_history(directory, repository(job, trigger), outcome.issue_number)
    facts = SummaryFacts(
        issue_url=issue_url(job, outcome),
        model=config.llm.model,
        profile=config.profile,
        profile_settings=profile_settings(config),
        history_backend=settings.history_backend,
        history=history,
        workspace=job.workspace,
        problems=list(getattr(backend, "problems", [])),
        prices=config.llm.prices,
        budget=config.budget,
    )
    history_file = history.filepath if history else None
    write_outputs(job, outputs_of(outcome, relative_history_path(history_file, job.workspace)))
    write_summary(job, render_summary(outcome, facts))


def repository(job: Job, trigger: Trigger) -> str:
    """owner/name as the forge adapter names it (the history file is keyed by it)."""
    variable = "GITHUB_REPOSITORY" if job.platform == "github" else "CI_PROJECT_PATH"
    return job.env.get(variable) or trigger.repository


def issue_url(job: Job, outcome: CiOutcome) -> str:
    if outcome.issue_number is None:
        return ""
    if job.platform == "github":
        server = job.env.get("GITHUB_SERVER_URL") or "https://github.com"
        return f"{server}/{job.env.get('GITHUB_REPOSITORY', '')}/issues/{outcome.issue_number}"
    project = job.env.get("CI_PROJECT_URL", "")
    return f"{project}/-/issues/{outcome.issue_number}" if project else ""


def outputs_of(outcome: CiOutcome, history_path: str) -> dict[str, str]:
    return {
        "status": outcome.status,
        # The issue acted on (a PR comment's is the PR's closing issue): names the artifact.
        "issue_number": "" if outcome.issue_number is None else str(outcome.issue_number),
        "pr_url": outcome.pr_url,
        "branch": outcome.branch,
        "comment_url": outcome.comment_url,
        "tokens_used": str(outcome.tokens_used),
        "history_path": history_path,
    }


def bare_outputs(status: str) -> dict[str, str]:
    """The outputs of a run that did not act: every name set, so later steps can rely on them."""
    return {**dict.fromkeys(OUTPUT_NAMES, ""), "status": status, "tokens_used": "0"}


def write_outputs(job: Job, values: Mapping[str, str]) -> None:
    """$GITHUB_OUTPUT, or the dotenv report a GitLab job passes to later jobs."""
    if job.platform == "github":
        target = job.env.get("GITHUB_OUTPUT")
        if target:
            write_github_outputs(Path(target), values)
        return
    dotenv = {f"PLANNER_{name.upper()}": value for name, value in values.items()}
    write_dotenv(job.workspace / DOTENV_FILE, dotenv)


def write_summary(job: Job, markdown: str) -> None:
    target = job.env.get("GITHUB_STEP_SUMMARY")
    if job.platform == "github" and target:
        append_text(Path(target), markdown)
        return
    with job.console.group("planner: summary"):
        job.console.text(markdown.rstrip())
