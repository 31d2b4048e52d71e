"""Releases: one version everywhere, the release-prep script, the release workflow, --version."""

from __future__ import annotations

import datetime
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

import planner
from planner.cli.main import main as planner_main
from scripts import release
from tests.fake_forge.core import IDENTITY, git
from tests.plans import copy_checkout

ROOT = Path(__file__).resolve().parent.parent
RELEASE_FILES = ("planner/__init__.py", "pyproject.toml", "action.yml", "CHANGELOG.md", "README.md")
RELEASE_DIRS = ("docs", "examples", "templates")
TODAY = datetime.date(2030, 1, 2)


@pytest.fixture
def tree(tmp_path: Path) -> release.Tree:
    """A copy of every file a release touches."""
    for name in RELEASE_FILES:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    for name in RELEASE_DIRS:
        shutil.copytree(ROOT / name, tmp_path / name)
    return release.Tree(tmp_path)


def released(tree: release.Tree, version: str) -> release.Tree:
    """The tree at the release tag: main's release commit, then action.yml on the image."""
    release.prepare(tree, version, TODAY)
    release.pin_image(tree)
    return tree


def test_the_repository_names_one_version() -> None:
    assert release.problems(release.Tree()) == []
    assert release.package_version(release.Tree()) == planner.__version__


def test_planner_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        planner_main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"planner {planner.__version__}"


def test_prepare_moves_every_reference_to_the_new_version(tree: release.Tree) -> None:
    old = release.package_version(tree)
    new = next_minor(old)
    assert release.main(["prepare", new], tree) == 0
    assert release.package_version(tree) == new
    assert release.template_version(tree) == new
    for name in tree.documents():
        assert f"planner-dev/planner@v{old}" not in tree.read(name), name
    assert f"planner-dev/planner@v{new}" in tree.read("examples/github/planner.yml")
    assert f'version: "{new}"' in tree.read("README.md")
    assert release.main(["image"], tree) == 0
    assert release.action_image(tree) == f"docker://ghcr.io/planner-dev/planner:{new}"
    assert release.main(["check", "--tag", f"v{new}"], tree) == 0


def test_after_prepare_main_still_builds_from_source(tree: release.Tree) -> None:
    """main gets the release commit of `prepare`: `uses: planner-dev/planner@main` must go on
    building main's Dockerfile, not run an image that may not be pushed (or public) yet."""
    action = tree.read("action.yml")
    new = next_minor(release.package_version(tree))
    assert release.main(["prepare", new], tree) == 0
    assert release.action_image(tree) == "Dockerfile"
    assert tree.read("action.yml") == action
    assert release.main(["check"], tree) == 0


def test_a_tag_whose_action_builds_the_dockerfile_is_refused(tree: release.Tree) -> None:
    new = next_minor(release.package_version(tree))
    release.prepare(tree, new, TODAY)
    assert release.problems(tree, f"v{new}") == [
        f"action.yml builds the Dockerfile at the tag v{new}; the tag's commit runs the released "
        "image (run: release.py image)"
    ]


def test_the_image_is_pinned_only_for_a_released_version(tree: release.Tree) -> None:
    if release.package_version(tree) in release.released_versions(tree):
        pytest.skip("this version is released")
    with pytest.raises(SystemExit, match="does not release"):
        release.pin_image(tree)
    assert release.action_image(tree) == "Dockerfile"


def test_prepare_rolls_the_changelog(tree: release.Tree) -> None:
    unreleased = release.section(tree.read("CHANGELOG.md"), release.UNRELEASED)
    new = next_minor(release.package_version(tree))
    released(tree, new)
    changelog = tree.read("CHANGELOG.md")
    assert f"## [Unreleased]\n\n## [{new}] - 2030-01-02\n" in changelog
    assert release.section(changelog, release.UNRELEASED) == ""
    assert release.notes(tree, new) == unreleased
    assert f"[{new}]: https://github.com/planner-dev/planner/releases/tag/v{new}" in changelog
    with pytest.raises(SystemExit, match="Unreleased section is empty"):
        release.prepare(tree, next_minor(new), TODAY)


def test_the_first_release_may_keep_the_version_it_was_developed_under(
    tree: release.Tree,
) -> None:
    current = release.package_version(tree)
    if current in release.released_versions(tree):
        pytest.skip("planner has been released before")
    released(tree, current)
    assert release.problems(tree, f"v{current}") == []


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("1.2", "not a semantic version"),
        ("v9.0.0", "not a semantic version"),
        ("0.0.1", "not newer"),
    ],
)
def test_prepare_refuses_a_bad_version(tree: release.Tree, version: str, reason: str) -> None:
    released(tree, next_minor(release.package_version(tree)))
    (tree.path("CHANGELOG.md")).write_text(
        tree.read("CHANGELOG.md").replace("## [Unreleased]\n", "## [Unreleased]\n\n- more\n"),
        encoding="utf-8",
    )
    with pytest.raises(SystemExit, match=reason):
        release.prepare(tree, version, TODAY)


def test_a_version_mismatch_is_named_and_refused(tree: release.Tree) -> None:
    """action.yml pinned to another release than the package, a doc naming an old tag."""
    version = release.package_version(tree)
    pinned = "image: docker://ghcr.io/planner-dev/planner:0.0.9"
    tree.write("action.yml", tree.read("action.yml").replace("image: Dockerfile", pinned))
    example = tree.read("examples/github/quickstart.yml")
    tree.write("examples/github/quickstart.yml", example.replace(f"@v{version}", "@v0.0.7"))
    found = release.problems(tree)
    assert any(p.startswith("action.yml: image") and "0.0.9" in p for p in found), found
    assert any("quickstart.yml: names planner 0.0.7" in p for p in found), found
    assert release.main(["check"], tree) == 1
    with pytest.raises(SystemExit, match="refusing: the tree disagrees"):
        release.prepare(tree, "5.0.0", TODAY)


def test_a_tag_that_is_not_the_version_is_refused(tree: release.Tree) -> None:
    new = next_minor(release.package_version(tree))
    released(tree, new)
    assert release.problems(tree, f"v{new}") == []
    assert release.problems(tree, "v99.0.0") == [
        f"the tag v99.0.0 is not v{new}, the package's version"
    ]


def test_a_release_image_without_its_changelog_section_is_refused(tree: release.Tree) -> None:
    version = release.package_version(tree)
    if version in release.released_versions(tree):
        pytest.skip("this version is released")
    tree.write(
        "action.yml",
        tree.read("action.yml").replace(
            "image: Dockerfile", f"image: docker://ghcr.io/planner-dev/planner:{version}"
        ),
    )
    assert release.problems(tree) == [
        f"action.yml runs the image of {version}, which CHANGELOG.md does not release"
    ]


# ---------------------------------------------------------------------------- the workflow


def workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(
        (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    )
    return loaded


def runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def test_the_release_workflow_tests_builds_releases_and_moves_the_major_tag() -> None:
    flow = workflow()
    assert flow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as true
    assert flow["permissions"] == {}
    jobs = flow["jobs"]
    order = {name: job.get("needs") for name, job in jobs.items()}
    assert order == {
        "check": None,
        "image": "check",
        "public": "image",
        "release": "public",
        "major-tag": "release",
    }
    assert 'release.py check --tag "$GITHUB_REF_NAME"' in runs(jobs["check"])
    assert "bash .ci/run" in runs(jobs["check"])
    build = runs(jobs["image"])
    for part in ("linux/amd64,linux/arm64", "--provenance=mode=max", "--sbom=true", "--push"):
        assert part in build
    assert flow["env"]["IMAGE"] == release.IMAGE
    assert jobs["image"]["permissions"] == {"contents": "read", "packages": "write"}
    assert "release.py public-image" in runs(jobs["public"])
    assert jobs["public"]["permissions"] == {"contents": "read"}
    publish = runs(jobs["release"])
    assert "release.py notes" in publish and "gh release create" in publish
    assert jobs["release"]["permissions"] == {"contents": "write"}
    major = jobs["major-tag"]
    assert 'major="${GITHUB_REF_NAME%%.*}"' in runs(major) and "refs/tags/${major}" in runs(major)


def test_the_major_tag_moves_with_an_app_token_that_may_touch_workflows() -> None:
    """GITHUB_TOKEN cannot get the `workflows` permission, and GitHub refuses it a tag moved onto
    commits that change .github/workflows/ (GH013): the step uses an App's token that has it."""
    job = workflow()["jobs"]["major-tag"]
    assert job["permissions"] == {}
    [app] = [step for step in job["steps"] if "create-github-app-token" in step.get("uses", "")]
    assert app["with"]["permission-workflows"] == "write"
    assert app["with"]["permission-contents"] == "write"
    [move] = [step for step in job["steps"] if "gh api" in step.get("run", "")]
    assert move["env"] == {"GH_TOKEN": f"${{{{ steps.{app['id']}.outputs.token }}}}"}
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for name in ("RELEASE_APP_ID", "RELEASE_APP_PRIVATE_KEY", "Workflows"):
        assert name in contributing


def next_minor(version: str) -> str:
    major, minor, _ = (int(part) for part in version.split("."))
    return f"{major}.{minor + 1}.0"


# ---------------------------------------------------------------------------- pinned releases


def scratch_clone(tmp_path: Path) -> Path:
    """The working tree as a fresh repository: tracked files and new ones git does not ignore."""
    clone = copy_checkout(tmp_path / "clone")
    git(clone.parent, "init", "-q", "-b", "main", str(clone))
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "main", env=IDENTITY)
    return clone


# Every file that pins the package's version: `release.py prepare` rewrites these and nothing else
# (besides the changelog).
PINNING = [
    "README.md",
    "docs/github.md",
    "docs/gitlab.md",
    "docs/self-hosted.md",
    "examples/github/planner-artifact.yml",
    "examples/github/planner-on-runner.yml",
    "examples/github/planner.yml",
    "examples/github/quickstart.yml",
    "planner/__init__.py",
    "templates/planner/template.yml",
]


def test_the_files_that_pin_a_release_are_these() -> None:
    assert release.Tree().pinning() == PINNING


def test_prepare_rewrites_every_file_that_pins_the_version_and_leaves_none_behind(
    tmp_path: Path,
) -> None:
    clone = scratch_clone(tmp_path)
    old = release.package_version(release.Tree(clone))
    new = next_minor(old)
    done = run_script(clone, "prepare", new)
    assert done.returncode == 0, done.stderr
    changed = git(clone, "diff", "--name-only").splitlines()
    assert changed == sorted([*PINNING, "CHANGELOG.md"])
    left = re.compile(rf"(?<![\d.]){re.escape(old)}(?![\d])")
    for path in sorted(clone.rglob("*")):
        name = path.relative_to(clone).as_posix()
        if not path.is_file() or name == "CHANGELOG.md" or name.startswith((".git/", "tests/")):
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        assert not left.search(text), f"{name} still names {old}"
    assert release.Tree(clone).pinning() == PINNING


def test_another_owner_or_a_component_tag_without_its_v_is_refused(tree: release.Tree) -> None:
    version = release.package_version(tree)
    example = tree.read("examples/github/planner-on-runner.yml")
    other = example.replace("planner-dev/", "your-org/")
    tree.write("examples/github/planner-on-runner.yml", other)
    gitlab = tree.read("docs/gitlab.md")
    tree.write("docs/gitlab.md", gitlab.replace(f"planner@v{version}", f"planner@{version}", 1))
    assert release.problems(tree) == [
        f"docs/gitlab.md: includes the component at {version}; GitLab resolves the tag's exact "
        f"name, v{version}",
        "examples/github/planner-on-runner.yml: names your-org/planner on GitHub, not "
        "planner-dev/planner",
    ]


def run_script(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/release.py", *args], cwd=clone, capture_output=True, text=True
    )


# ---------------------------------------------------------------------- the image's visibility


class Registry:
    """A stand-in for ghcr.io's anonymous pulls over a real socket: the token endpoint hands
    anyone a pull token, and the manifest answers it only when the package is public."""

    def __init__(self, public: bool, tags: set[str]) -> None:
        self.public, self.tags = public, tags
        self.requests: list[str] = []
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                registry.requests.append(f"GET {self.path}")
                body = json.dumps({"token": "anonymous"}).encode()
                self._answer(200 if self.path.startswith("/token?") else 404, body)

            def do_HEAD(self) -> None:
                registry.requests.append(f"HEAD {self.path}")
                tag = self.path.rsplit("/", 1)[-1]
                anonymous = self.headers.get("Authorization") == "Bearer anonymous"
                if not (registry.public and anonymous):
                    self._answer(401, b"")
                else:
                    self._answer(200 if tag in registry.tags else 404, b"")

            def _answer(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def image(self) -> str:
        return f"127.0.0.1:{self.server.server_address[1]}/planner-dev/planner"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def registry() -> Iterator[Registry]:
    stand_in = Registry(public=True, tags={"1.2.0"})
    yield stand_in
    stand_in.close()


def test_a_public_image_passes_with_an_anonymous_pull_token(
    registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    assert release.main(["public-image", f"{registry.image}:1.2.0"]) == 0
    assert registry.requests == [
        "GET /token?scope=repository:planner-dev/planner:pull&service=127.0.0.1",
        "HEAD /v2/planner-dev/planner/manifests/1.2.0",
    ]
    assert "can be pulled by anyone" in capsys.readouterr().out


def test_a_private_image_fails_with_the_one_time_fix(
    registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    registry.public = False
    assert release.main(["public-image", f"{registry.image}:1.2.0"]) == 1
    said = capsys.readouterr().err
    assert f"{registry.image}:1.2.0 cannot be pulled without credentials (HTTP 401)" in said
    assert "Change visibility -> Public" in said and "re-run this job" in said


def test_a_missing_tag_or_an_unreachable_registry_is_named(registry: Registry) -> None:
    assert release.image_problem(f"{registry.image}:9.9.9") == (
        f"{registry.image}:9.9.9 cannot be pulled without credentials (HTTP 404)"
    )
    registry.close()
    problem = release.image_problem(f"{registry.image}:1.2.0")
    assert problem is not None and "the registry could not be asked" in problem


# ---------------------------------------------------------------------------- the dry run

STAND_IN = """#!{python}
# A stand-in for the command it is named after: records what it was asked, then answers
# `gh release view` and `gh api .../git/ref/tags/...` with "not found".
import json, os, sys
argv = [os.path.basename(sys.argv[0]), *sys.argv[1:]]
record = {{"argv": argv, "GH_TOKEN": os.environ.get("GH_TOKEN", "")}}
record["stdin"] = sys.stdin.read() if argv[1:2] == ["login"] else ""
with open(os.environ["DRY_RUN_LOG"], "a") as log:
    log.write(json.dumps(record) + "\\n")
sys.exit(1 if argv[1:3] == ["release", "view"] or "/git/ref/tags/" in " ".join(argv) else 0)
"""
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
SKIPPED_STEPS = ["bash .ci/run"]  # the whole suite: the one this test runs in


@dataclass
class DryRun:
    """release.yml's jobs, in order, on a clone at the release tag: every `run:` step in bash
    with GitHub's variables, docker and gh replaced by stand-ins, the actions it uses done here."""

    clone: Path
    env: dict[str, str]
    finished: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    outputs: dict[str, str] = field(default_factory=dict)

    def run(self) -> DryRun:
        flow = yaml.safe_load((self.clone / ".github/workflows/release.yml").read_text())
        for name, job in flow["jobs"].items():
            if job.get("needs") and job["needs"] not in self.finished:
                continue
            env = {**self.env, **flow.get("env", {}), **{"IMAGE": self.env["IMAGE"]}}
            env["RUNNER_TEMP"] = str(Path(self.env["RUNNER_TEMP"]) / name)
            Path(env["RUNNER_TEMP"]).mkdir()
            problem = next(filter(None, (self.step(step, env) for step in job["steps"])), None)
            if problem is None:
                self.finished.append(name)
            else:
                self.failed[name] = problem
        return self

    def step(self, step: dict[str, Any], env: dict[str, str]) -> str | None:
        if "uses" in step:
            self.action(step)
            return None
        if step["run"].strip() in SKIPPED_STEPS:
            self.skipped.append(step["run"].strip())
            return None
        values = {key: self.value(str(value)) for key, value in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", self.value(step["run"])],
            cwd=self.clone,
            env={**env, **values},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
        )
        return None if done.returncode == 0 else f"{step['name']}: {done.stderr}"

    def action(self, step: dict[str, Any]) -> None:
        action, arguments = step["uses"].split("@")[0], step.get("with", {})
        if action == "actions/checkout":
            assert arguments["persist-credentials"] is False
        elif action == "actions/create-github-app-token":
            app = self.value(arguments["app-id"]), self.value(arguments["private-key"])
            self.outputs[f"steps.{step['id']}.outputs.token"] = "app-token-of-" + "-".join(app)
        else:
            assert action == "actions/setup-python", f"the dry run does not know {action}"

    def value(self, text: str) -> str:
        def known(match: re.Match[str]) -> str:
            name = match[1]
            if name == "github.token":
                return "job-token"
            for kind in ("secrets", "vars"):
                if name.startswith(f"{kind}."):
                    return f"{kind}-{name.removeprefix(kind + '.')}"
            return self.outputs[name]

        return EXPRESSION.sub(known, text)

    def calls(self, command: str) -> list[dict[str, Any]]:
        log = Path(self.env["DRY_RUN_LOG"])
        lines = log.read_text().splitlines() if log.exists() else []
        return [call for call in map(json.loads, lines) if call["argv"][0] == command]


def dry_run(tmp_path: Path, registry: Registry) -> tuple[DryRun, str]:
    """CONTRIBUTING's release steps on a scratch clone (prepare and commit on main, the image
    pinned on a commit of its own that only the tag names), then release.yml at the tag."""
    clone = scratch_clone(tmp_path)
    current = release.package_version(release.Tree(clone))
    first = current not in release.released_versions(release.Tree(clone))
    version = current if first else next_minor(current)
    done = run_script(clone, "prepare", version)
    assert done.returncode == 0, done.stderr
    git(clone, "commit", "-q", "-am", f"Release {version}", env=IDENTITY)
    git(clone, "switch", "-q", "--detach")
    done = run_script(clone, "image")
    assert done.returncode == 0, done.stderr
    git(
        clone,
        "commit",
        "-q",
        "-am",
        f"v{version}: action.yml runs the released image",
        env=IDENTITY,
    )
    git(clone, "tag", f"v{version}")
    git(clone, "switch", "-q", "main")
    assert release.action_image(release.Tree(clone)) == "Dockerfile"
    git(clone, "switch", "-q", "--detach", f"v{version}")
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for command in ("docker", "gh", "sudo"):
        (stand_ins / command).write_text(STAND_IN.format(python=sys.executable))
        (stand_ins / command).chmod(0o755)
    (stand_ins / "python3").symlink_to(sys.executable)
    (tmp_path / "runner").mkdir()
    env = {
        "PATH": f"{stand_ins}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "DRY_RUN_LOG": str(tmp_path / "calls.jsonl"),
        "GITHUB_REF_NAME": f"v{version}",
        "GITHUB_SHA": git(clone, "rev-parse", "HEAD"),
        "GITHUB_REPOSITORY": release.REPOSITORY,
        "GITHUB_ACTOR": "maintainer",
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "IMAGE": registry.image,
    }
    registry.tags = {version}
    return DryRun(clone, env).run(), version


def test_a_whole_release_on_a_scratch_clone(tmp_path: Path, registry: Registry) -> None:
    run, version = dry_run(tmp_path, registry)

    assert run.failed == {} and run.skipped == SKIPPED_STEPS
    assert run.finished == ["check", "image", "public", "release", "major-tag"]
    tag, main = (
        git(run.clone, "rev-parse", f"v{version}^{{commit}}"),
        git(run.clone, "rev-parse", "main"),
    )
    assert git(run.clone, "rev-parse", f"{tag}^") == main  # the tag's commit is main's release + 1
    assert git(run.clone, "show", "main:action.yml").count("image: Dockerfile") == 1
    image = f"image: docker://ghcr.io/planner-dev/planner:{version}"
    assert image in git(run.clone, "show", f"{tag}:action.yml")
    login, *_, build = run.calls("docker")
    assert login["argv"][1:3] == ["login", "ghcr.io"] and login["stdin"] == "job-token"
    assert build["argv"][1:3] == ["buildx", "build"]
    assert f"{registry.image}:{version}" in build["argv"] and "--push" in build["argv"]
    assert f"org.opencontainers.image.version={version}" in build["argv"]
    assert f"HEAD /v2/planner-dev/planner/manifests/{version}" in registry.requests
    view, create, exists, move = run.calls("gh")
    assert view["argv"][1:] == ["release", "view", f"v{version}"]
    assert create["argv"][1:4] == ["release", "create", f"v{version}"]
    assert create["GH_TOKEN"] == "job-token"
    notes = Path(create["argv"][create["argv"].index("--notes-file") + 1]).read_text()
    assert notes.strip() == release.notes(release.Tree(run.clone), version)
    major = f"v{version.split('.')[0]}"
    assert exists["argv"][-1].endswith(f"/git/ref/tags/{major}")
    assert move["argv"][1:4] == ["api", "--method", "POST"]
    assert f"ref=refs/tags/{major}" in move["argv"]
    assert f"sha={run.env['GITHUB_SHA']}" in move["argv"]
    assert move["GH_TOKEN"] == "app-token-of-vars-RELEASE_APP_ID-secrets-RELEASE_APP_PRIVATE_KEY"


def test_a_release_whose_image_is_private_stops_before_it_is_announced(
    tmp_path: Path, registry: Registry
) -> None:
    registry.public = False
    run, _ = dry_run(tmp_path, registry)

    assert run.finished == ["check", "image"]
    assert list(run.failed) == ["public"]
    assert "cannot be pulled without credentials (HTTP 401)" in run.failed["public"]
    assert "Change visibility -> Public" in run.failed["public"]
    assert run.calls("gh") == []
