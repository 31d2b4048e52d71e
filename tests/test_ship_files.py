"""What users install stays consistent: action.yml, its documentation, the Dockerfile's layout,
the pinned runtime requirements, the example workflows and the GitLab component.

The linters themselves (hadolint, zizmor, action-validator) run in `scripts/dev.py lint-ci`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement

import planner
from planner.ci.action import OUTPUT_NAMES
from planner.storage.artifact import ARTIFACT_PREFIX
from scripts import action_docs, lint_ci

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "action.yml"
DOCKERFILE = ROOT / "Dockerfile"
EXAMPLES = ROOT / "examples" / "github"
COMPONENT = ROOT / "templates" / "planner" / "template.yml"
README = ROOT / "README.md"
GITHUB_DOC = ROOT / "docs" / "github.md"
FULL_SHA = re.compile(r"^[^@\s]+@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def instructions(path: Path = DOCKERFILE) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of a Dockerfile, continuation lines joined."""
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


# ---------------------------------------------------------------------------- action.yml


def test_action_inputs_and_outputs() -> None:
    action = load(ACTION)
    # main builds the Dockerfile; a release runs its own prebuilt image (scripts/release.py).
    released = f"docker://ghcr.io/planner-dev/planner:{planner.__version__}"
    assert action["runs"]["using"] == "docker"
    assert action["runs"]["image"] in ("Dockerfile", released)
    for name, spec in action["inputs"].items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), f"{name}: underscores only"
        assert spec["description"].strip() and "default" in spec, name
    assert action["inputs"]["github_token"]["default"] == "${{ github.token }}"
    assert action["inputs"]["history_backend"]["default"] == "cache"
    assert list(action["outputs"]) == list(OUTPUT_NAMES)  # every output the job writes
    for name, spec in action["outputs"].items():
        assert "$GITHUB_OUTPUT" in spec["description"] and "value" not in spec, name


def test_documented_tables_match_action_yml(tmp_path: Path) -> None:
    assert action_docs.stale_documents(action_docs.default_documents(), load(ACTION)) == []

    changed = load(ACTION)
    changed["inputs"]["model"]["description"] = "Another description."
    changed["outputs"]["extra"] = {"description": "A new output."}
    assert action_docs.default_documents() == [GITHUB_DOC]
    assert action_docs.stale_documents([GITHUB_DOC], changed) == [
        f"{GITHUB_DOC}: the inputs/outputs table differs from action.yml"
    ]
    copy = tmp_path / "github.md"
    shutil.copy(GITHUB_DOC, copy)
    assert action_docs.main(["--write", "--action", str(ACTION), str(copy)]) == 0
    assert copy.read_text(encoding="utf-8") == GITHUB_DOC.read_text(encoding="utf-8")


def test_the_documented_workflows_are_the_example_files() -> None:
    """The README's quick start and docs/github.md show the example files as they are."""
    for document, example in ((README, "quickstart.yml"), (GITHUB_DOC, "planner.yml")):
        blocks = re.findall(r"```yaml\n(.*?)```", document.read_text(encoding="utf-8"), re.DOTALL)
        assert (EXAMPLES / example).read_text(encoding="utf-8") in blocks, document.name


def test_the_documented_bot_condition_is_the_examples_with_one_bot_let_through() -> None:
    """allowed_bots needs the job-level if widened; docs/github.md shows how, in step with it."""
    blocks = re.findall(r"```yaml\n(.*?)```", GITHUB_DOC.read_text(encoding="utf-8"), re.DOTALL)
    [snippet] = [yaml.safe_load(b) for b in blocks if b.lstrip().startswith("if:")]
    job = load(EXAMPLES / "planner.yml")["jobs"]["plan"]
    bots = "github.event.sender.type != 'Bot'"
    widened = f"({bots} || github.event.sender.login == 'renovate[bot]')"
    assert snippet["if"] == job["if"].replace(bots, widened, 1) != job["if"]
    description = " ".join(load(ACTION)["inputs"]["allowed_bots"]["description"].split())
    assert "github.event.sender.login == 'renovate[bot]'" in description


def test_the_docs_quote_the_draft_note_the_tracking_comment_shows() -> None:
    readme = " ".join(GITHUB_DOC.read_text(encoding="utf-8").split())
    [note] = re.findall(r'the tracking comment says "([^"]+)"', readme)
    assert f'"{note}"' in (ROOT / "planner" / "ci" / "handlers" / "issue_pass.py").read_text(
        encoding="utf-8"
    )


# ---------------------------------------------------------------------------- Dockerfile


def test_dockerfile_follows_the_rules_for_docker_actions() -> None:
    steps = instructions()
    kinds = [kind for kind, _ in steps]
    assert "USER" not in kinds and "WORKDIR" not in kinds
    base = dict(steps)["FROM"]
    assert re.fullmatch(r"python:\d+\.\d+\.\d+-slim-\w+", base), f"{base}: pin a patch version"
    entrypoint = yaml.safe_load(dict(steps)["ENTRYPOINT"])
    assert entrypoint[-1] == "/app/entrypoint.py" and all(p.startswith("/") for p in entrypoint)


def test_the_image_layout_finds_its_package_and_prompts(tmp_path: Path) -> None:
    """Lay the files out as the Dockerfile's COPY lines do and start a script beside the entry
    point, with nothing of this checkout on sys.path: the package and every prompt are found."""
    image = tmp_path / "image"
    environment = {"PATH": os.environ["PATH"]}
    for kind, arguments in instructions():
        if kind == "COPY":
            source, target = arguments.split()
            place(ROOT / source, image / target.lstrip("/"))
        if kind == "ENV":
            environment |= dict(re.findall(r"(PLANNER_\w+)=(\S+)", arguments))
    environment = {k: v.replace("/app", str(image / "app")) for k, v in environment.items()}
    probe = image / "app" / "probe.py"
    probe.write_text(
        "import planner, planner.text.prompts\n"
        "print(planner.__file__)\n"
        "print(sorted(p.name for p in planner.text.prompts.prompts_dir().glob('*.j2')))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-s", str(probe)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )
    package, prompts = completed.stdout.splitlines()
    assert Path(package).is_relative_to(image / "app" / "planner")
    assert prompts == str(sorted(p.name for p in (ROOT / "planner" / "prompts").glob("*.j2")))
    assert (image / "app" / "entrypoint.py").is_file()


def place(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)


def test_the_pinned_runtime_requirements_satisfy_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins: dict[str, str] = {}
    for line in (ROOT / "requirements-runtime.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            requirement = Requirement(line)
            [specifier] = requirement.specifier
            assert specifier.operator == "==", f"{line}: pin an exact version"
            pins[canonical(requirement.name)] = specifier.version
    for dependency in map(Requirement, project["dependencies"]):
        version = pins.get(canonical(dependency.name))
        assert version is not None, f"{dependency.name} is missing from requirements-runtime.txt"
        assert dependency.specifier.contains(version), f"{dependency.name}=={version}"
    dev_only = {canonical(Requirement(d).name) for d in project["optional-dependencies"]["dev"]}
    assert not dev_only & set(pins), "dev tools do not belong in the image"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# ----------------------------------------------------------------------------- workflows


@pytest.mark.parametrize("name", ["planner.yml", "planner-artifact.yml"])
def test_example_workflow_filters_queues_and_keeps_history(name: str) -> None:
    workflow = load(EXAMPLES / name)
    assert workflow["permissions"] == {}
    # YAML 1.1 reads the key `on` as true.
    triggers = workflow[True]
    assert triggers["issues"] == {"types": ["labeled"]}
    assert triggers["issue_comment"] == {"types": ["created"]}
    assert set(triggers) == {"issues", "issue_comment", "schedule", "workflow_dispatch", *REVIEWS}
    check_sweep(workflow)
    job = workflow["jobs"]["plan"]
    condition = " ".join(job["if"].split())
    for needed in ("sender.type != 'Bot'", "label.name == 'planner'", "'/planner')"):
        assert needed in condition
    check_reviews(workflow)
    assert condition.startswith("github.event_name == 'workflow_dispatch' || (")
    assert job["permissions"] == {
        "contents": "write",
        "issues": "write",
        "pull-requests": "write",
        "actions": "read",
    }
    # No concurrency group: GitHub would cancel all but one waiting run (dropped events); runs
    # on one issue take turns through planner's lease, runs on different issues run at once.
    assert "concurrency" not in job
    assert job["timeout-minutes"] > 0
    steps = job["steps"]
    [action] = [s for s in steps if s.get("id") == "planner"]
    assert int(action["with"]["max_minutes"]) < job["timeout-minutes"]
    history_dir = action["with"]["history_dir"]
    saving = [s for s in steps if s["uses"].split("@")[0] in SAVERS]
    assert saving and all(
        s["if"].startswith("always()") and s["with"]["path"] == history_dir for s in saving
    )
    check_history_steps(steps, action["with"]["history_backend"], history_dir)


SAVERS = ("actions/cache/save", "actions/upload-artifact")
REVIEWS = {"pull_request_review": ["submitted"], "pull_request_review_comment": ["created"]}
PLANNERS_PULL = (
    "startsWith(github.event.pull_request.head.ref, 'planner/issue-') && "
    "github.event.pull_request.head.repo.full_name == github.repository"
)


def check_reviews(workflow: dict[Any, Any]) -> None:
    """Reviews of planner's pull request reach the job only from this repository's planner
    branches and with the phrase, under the issue events' permissions and (no) concurrency
    group; the checkout is the default branch, not the pull request's merge ref."""
    triggers = workflow[True]
    for event, types in REVIEWS.items():
        assert triggers[event] == {"types": types}
    [job] = [job for name, job in workflow["jobs"].items() if name != "sweep"]
    condition = " ".join(job["if"].split())
    assert PLANNERS_PULL in condition
    assert "contains(github.event.review.body, '/planner')" in condition
    assert "github.event_name == 'pull_request_review_comment' && contains(" in condition
    assert job["permissions"]["pull-requests"] == "write" and "concurrency" not in job
    [checkout] = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"


def check_sweep(workflow: dict[Any, Any]) -> None:
    """The assumption sweep: scheduled, in its own job, the only one that may dispatch runs,
    and the dispatch it makes (`issue` only) is one the workflow accepts."""
    [cron] = workflow[True]["schedule"]
    assert cron["cron"].split()[0].startswith("*/")
    inputs = workflow[True]["workflow_dispatch"]["inputs"]
    assert inputs["issue"]["required"] is True and inputs["instruction"]["required"] is False
    sweep = workflow["jobs"]["sweep"]
    assert sweep["if"] == "github.event_name == 'schedule'"
    assert sweep["permissions"] == {"contents": "read", "issues": "read", "actions": "write"}
    assert [s["uses"].split("@")[0] for s in sweep["steps"]][-1] == "planner-dev/planner"
    assert "schedule" not in workflow["jobs"]["plan"]["if"]


def test_the_quick_start_workflow_is_the_plan_job_without_extras() -> None:
    """The README's one-screen workflow: the example's filters, permissions and checkout, the
    released action; no sweep, cache or artifact steps (the lease ref carries the history)."""
    quick, full = load(EXAMPLES / "quickstart.yml"), load(EXAMPLES / "planner.yml")
    assert quick["permissions"] == {}
    assert set(quick[True]) == {"issues", "issue_comment", *REVIEWS}
    check_reviews(quick)
    check_reviews(load(EXAMPLES / "planner-on-runner.yml"))
    [job] = quick["jobs"].values()
    plan = full["jobs"]["plan"]
    assert job["permissions"] == plan["permissions"]
    for condition in (
        "github.event.sender.type != 'Bot'",
        "github.event.label.name == 'planner'",
        "contains(github.event.comment.body, '/planner')",
        "contains(github.event.issue.labels.*.name, 'planner:needs-input')",
    ):
        assert condition in job["if"] and condition in plan["if"], condition
    checkout, action = job["steps"]
    assert checkout["with"]["persist-credentials"] is False
    assert action["uses"] == f"planner-dev/planner@v{planner.__version__}"
    assert action["with"]["openai_api_key"] == "${{ secrets.OPENAI_API_KEY }}"


def check_history_steps(steps: list[dict[str, Any]], backend: str, history_dir: str) -> None:
    by_action = {step["uses"].split("@")[0]: step for step in steps}
    issue = "${{ steps.planner.outputs.issue_number }}"
    saved = "always() && steps.planner.outputs.issue_number != ''"
    if backend == "cache":  # a cache per issue (the fast path) ...
        restore, save = by_action["actions/cache/restore"], by_action["actions/cache/save"]
        assert restore["with"]["path"] == history_dir
        event_issue = "${{ github.event.issue.number || inputs.issue }}"
        assert restore["with"]["restore-keys"] == f"planner-history-{event_issue}-"
        run = "${{ github.run_id }}-${{ github.run_attempt }}"
        assert restore["with"]["key"] == f"planner-history-{event_issue}-{run}"
        assert save["with"]["key"] == f"planner-history-{issue}-{run}"
        assert save["if"] == saved
    # ... and always an artifact per issue (the durable copy), 90 days unless configured.
    upload = by_action["actions/upload-artifact"]
    assert upload["with"]["name"] == f"{ARTIFACT_PREFIX}{issue}"
    assert upload["if"] == saved
    days = "${{ vars.PLANNER_HISTORY_RETENTION_DAYS || 90 }}"
    assert upload["with"]["retention-days"] == days


def test_every_third_party_action_is_pinned_by_commit_sha() -> None:
    for path in [*EXAMPLES.glob("*.yml"), *(ROOT / ".github" / "workflows").glob("*.yml")]:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.search(r"uses:\s*(\S+)(.*)", line)
            if not match or match[1].startswith("planner-dev/planner@"):
                continue
            assert FULL_SHA.match(match[1]), f"{path.name}: {match[1]} is not pinned by SHA"
            assert re.search(r"# v\d+\.\d+\.\d+", match[2]), f"{path.name}: add a version comment"


STARTS_PLANNER = re.compile(r"\bplanner\"? action\b|\bplanner-action\b")
SAFE_START = 'sudo -E env "PATH=$PATH" '


def github_steps() -> list[tuple[str, dict[str, Any]]]:
    """Every step of a GitHub workflow shown in docs/ or kept in examples/github."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S):
            document = yaml.safe_load(block)
            jobs = document.get("jobs", {}) if isinstance(document, dict) else {}
            steps = document if isinstance(document, list) else []
            steps += [step for job in jobs.values() for step in job.get("steps", [])]
            found += [(page.name, step) for step in steps]
    for example in sorted(EXAMPLES.glob("*.yml")):
        for job in load(example)["jobs"].values():
            found += [(example.name, step) for step in job["steps"]]
    return found


def test_every_runner_step_that_starts_planner_starts_it_as_root_with_sudo() -> None:
    """Without sudo the model's commands run as the runner's user, beside the job's tokens
    (docs/security.md): the docs show one way, the safe one, as the example file does."""
    starts = [(where, step["run"]) for where, step in github_steps() if "run" in step]
    starts = [(where, run) for where, run in starts if STARTS_PLANNER.search(run)]
    assert {where for where, _ in starts} >= {"self-hosted.md", "planner-on-runner.yml"}
    assert [(where, run) for where, run in starts if not run.startswith(SAFE_START)] == []


def test_the_self_hosted_steps_are_the_examples() -> None:
    steps = github_steps()
    example = {step["name"]: step for where, step in steps if where == "planner-on-runner.yml"}
    shown = [step for where, step in steps if where == "self-hosted.md"]
    names = ["Set up Python for planner", "Install planner", "Plan and act"]
    assert [step["name"] for step in shown] == names
    for step in shown:
        theirs = example[step["name"]]
        assert {**step, "env": None} == {**theirs, "env": None}, step["name"]
        assert step.get("env", {}).items() <= theirs.get("env", {}).items(), step["name"]


def test_repository_ci_runs_the_same_script_with_read_only_credentials() -> None:
    workflow = load(ROOT / ".github" / "workflows" / "ci.yml")
    assert workflow["permissions"] == {}
    [job] = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read"}
    checkout = job["steps"][0]
    assert checkout["with"]["persist-credentials"] is False
    assert [step.get("run") for step in job["steps"] if "run" in step] == ["bash .ci/run"]
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = re.findall(r"^python3 scripts/dev.py (\S+)$", ci_run, re.MULTILINE)
    assert commands == ["test", "lint", "lint-ci"]


# -------------------------------------------------------------------------------- GitLab


def test_gitlab_component_declares_exactly_the_inputs_it_uses() -> None:
    assert lint_ci.component_problems() == []
    _, jobs = yaml.safe_load_all(COMPONENT.read_text(encoding="utf-8"))
    job = jobs["planner"]
    assert job["image"]["entrypoint"] == [""]
    assert "resource_group" not in job  # runs on one issue take turns through the lease
    assert job["cache"]["when"] == "always"
    assert job["artifacts"]["when"] == "always"
    assert job["script"] == [" ".join(yaml.safe_load(dict(instructions())["ENTRYPOINT"]))]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (('INPUT_MODEL: "$[[ inputs.model ]]"', "INPUT_MODEL: x"), "'model' is declared but"),
        (("$[[ inputs.stage ]]", "$[[ inputs.stages ]]"), "'stages' is used but not declared"),
        (("INPUT_MAX_TOKENS:", "INPUT_MAX_TOKEN:"), "sets INPUT_MAX_TOKEN, which is no input"),
        (("  interruptible: false", "  interruptible: [false"), "not valid YAML"),
        (("\n---\n", "\n"), "needs two YAML documents"),
    ],
)
def test_gitlab_component_check_finds_mistakes(
    tmp_path: Path, change: tuple[str, str], problem: str
) -> None:
    text = COMPONENT.read_text(encoding="utf-8")
    assert change[0] in text
    broken = tmp_path / "template.yml"
    broken.write_text(text.replace(change[0], change[1], 1), encoding="utf-8")

    problems = lint_ci.component_problems(broken)

    assert any(problem in p for p in problems), problems
