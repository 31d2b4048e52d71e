"""Releases: one version everywhere, the release-prep script, the release workflow, --version."""

from __future__ import annotations

import datetime
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

import planner
from planner.cli.main import main as planner_main
from scripts import release

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
    release.prepare(tree, version, TODAY)
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
    assert release.action_image(tree) == f"docker://ghcr.io/planner-dev/planner:{new}"
    assert release.template_version(tree) == new
    for name in tree.documents():
        assert f"planner-dev/planner@v{old}" not in tree.read(name), name
    assert f"planner-dev/planner@v{new}" in tree.read("examples/github/planner.yml")
    assert f'version: "{new}"' in tree.read("README.md")
    assert release.main(["check", "--tag", f"v{new}"], tree) == 0


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
    assert jobs["image"]["needs"] == "check" and jobs["release"]["needs"] == "image"
    assert 'release.py check --tag "$GITHUB_REF_NAME"' in runs(jobs["check"])
    assert "bash .ci/run" in runs(jobs["check"])
    build = runs(jobs["image"])
    for part in ("linux/amd64,linux/arm64", "--provenance=mode=max", "--sbom=true", "--push"):
        assert part in build
    assert flow["env"]["IMAGE"] == release.IMAGE
    assert jobs["image"]["permissions"] == {"contents": "read", "packages": "write"}
    publish = runs(jobs["release"])
    assert "release.py notes" in publish and "gh release create" in publish
    assert 'major="${GITHUB_REF_NAME%%.*}"' in publish and "refs/tags/${major}" in publish
    assert jobs["release"]["permissions"] == {"contents": "write"}


def next_minor(version: str) -> str:
    major, minor, _ = (int(part) for part in version.split("."))
    return f"{major}.{minor + 1}.0"
