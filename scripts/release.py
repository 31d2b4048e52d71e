#!/usr/bin/env python3
"""Prepare and check a release: one version in the package, action.yml, the changelog and the docs.

    python3 scripts/release.py check [--tag vX.Y.Z]  # exit 1 naming every mismatch
    python3 scripts/release.py prepare X.Y.Z         # bump, roll the changelog, point at the image
    python3 scripts/release.py notes X.Y.Z           # the changelog's section (release notes)

The version lives in planner/__init__.py only (pyproject reads it). `prepare` writes it, turns the
changelog's Unreleased section into `## [X.Y.Z] - DATE`, makes action.yml run the released image
`docker://ghcr.io/planner-dev/planner:X.Y.Z` instead of building the Dockerfile, and moves every
`planner-dev/planner@vOLD` of the README, docs and examples and the GitLab template's version to
the new one. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "planner-dev/planner"
IMAGE = f"ghcr.io/{REPOSITORY}"
SEMVER = re.compile(r"(\d+)\.(\d+)\.(\d+)")
VERSION_LINE = re.compile(r'^__version__ = "([^"]+)"$', re.M)
IMAGE_LINE = re.compile(r"^(  image: )(\S+)$", re.M)
TEMPLATE_VERSION = re.compile(r'(\n    version:\n(?:      .*\n)*?      default: )"([^"]+)"')
USES = re.compile(rf"{re.escape(REPOSITORY)}@v(\d+\.\d+\.\d+)")
COMPONENT = re.compile(r"/planner/planner@v?(\d+\.\d+\.\d+)")  # on any GitLab project path
PINNED_IMAGE = re.compile(r"/planner:(\d+\.\d+\.\d+)")  # the released image or a mirror of it
INPUT_VERSION = re.compile(r'(?<![-\w])(version: )"(\d+\.\d+\.\d+)"')
UNRELEASED = "## [Unreleased]"


class Tree:
    """The files a release touches, under one root (a copy of the repository in the tests)."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root

    def path(self, name: str) -> Path:
        return self.root / name

    def read(self, name: str) -> str:
        return self.path(name).read_text(encoding="utf-8")

    def write(self, name: str, text: str) -> None:
        self.path(name).write_text(text, encoding="utf-8")

    def documents(self) -> list[str]:
        """Pages and examples that name a release of planner."""
        names = ["README.md", *sorted(p.name for p in self.path("docs").glob("*.md"))]
        names = [n if n == "README.md" else f"docs/{n}" for n in names]
        examples = sorted(self.path("examples").rglob("*.yml"))
        return names + [str(p.relative_to(self.root)) for p in examples]


# --------------------------------------------------------------------------- reading


def package_version(tree: Tree) -> str:
    match = VERSION_LINE.search(tree.read("planner/__init__.py"))
    if match is None:
        raise SystemExit("planner/__init__.py has no __version__ line")
    return match[1]


def action_image(tree: Tree) -> str:
    match = IMAGE_LINE.search(tree.read("action.yml"))
    return match[2] if match else ""


def template_version(tree: Tree) -> str:
    match = TEMPLATE_VERSION.search(tree.read("templates/planner/template.yml"))
    return match[2] if match else ""


def released_versions(tree: Tree) -> list[str]:
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\]", tree.read("CHANGELOG.md"), re.M)


def section(changelog: str, heading: str) -> str:
    """The text under `heading` up to the next `## ` heading or the link references."""
    start = changelog.index(heading) + len(heading)
    rest = changelog[start:]
    end = re.search(r"^## |^\[[^\]]+\]: ", rest, re.M)
    return rest[: end.start() if end else len(rest)].strip()


def notes(tree: Tree, version: str) -> str:
    changelog = tree.read("CHANGELOG.md")
    match = re.search(rf"^## \[{re.escape(version)}\][^\n]*$", changelog, re.M)
    if match is None:
        raise SystemExit(f"CHANGELOG.md has no section for {version}")
    return section(changelog, match[0])


# --------------------------------------------------------------------------- checking


def problems(tree: Tree, tag: str | None = None) -> list[str]:
    """Every disagreement about the version; empty when the tree is consistent."""
    version = package_version(tree)
    found = []
    if not SEMVER.fullmatch(version):
        found.append(f"planner/__init__.py: {version!r} is not a semantic version X.Y.Z")
    if re.search(r'^version = "', tree.read("pyproject.toml"), re.M):
        found.append("pyproject.toml: the version must come from planner/__init__.py only")
    found += _action_problems(tree, version)
    found += _changelog_problems(tree)
    found += _document_problems(tree, version)
    if template_version(tree) != version:
        found.append(
            f"templates/planner/template.yml: input version {template_version(tree)!r} "
            f"is not the package's {version}"
        )
    if tag is not None and tag != f"v{version}":
        found.append(f"the tag {tag} is not v{version}, the package's version")
    if tag is not None and version not in released_versions(tree):
        found.append(f"CHANGELOG.md has no section for {version} (run: release.py prepare)")
    return found


def _action_problems(tree: Tree, version: str) -> list[str]:
    image = action_image(tree)
    if image in ("Dockerfile", f"docker://{IMAGE}:{version}"):
        if image == "Dockerfile" or version in released_versions(tree):
            return []
        return [f"action.yml runs the image of {version}, which CHANGELOG.md does not release"]
    return [f"action.yml: image {image!r} is neither Dockerfile nor docker://{IMAGE}:{version}"]


def _changelog_problems(tree: Tree) -> list[str]:
    if not tree.path("CHANGELOG.md").is_file():
        return ["CHANGELOG.md is missing"]
    versions = released_versions(tree)
    found = [] if UNRELEASED in tree.read("CHANGELOG.md") else [f"CHANGELOG.md: no {UNRELEASED}"]
    ordered = sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")), reverse=True)
    if versions != ordered:
        found.append("CHANGELOG.md: releases are not newest first")
    return found


def _document_problems(tree: Tree, version: str) -> list[str]:
    found = []
    for name in tree.documents():
        text = tree.read(name)
        for pattern in (USES, COMPONENT, PINNED_IMAGE, INPUT_VERSION):
            named = {match[match.lastindex or 0] for match in pattern.finditer(text)}
            for other in sorted(named - {version}):
                found.append(f"{name}: names planner {other}, not the package's {version}")
    return found


# --------------------------------------------------------------------------- preparing


def prepare(tree: Tree, new: str, today: datetime.date) -> None:
    """Bump every version reference to `new`; refuse when the tree disagrees already."""
    current = package_version(tree)
    before = problems(tree)
    if before:
        raise SystemExit("refusing: the tree disagrees already:\n" + "\n".join(before))
    _refuse_version(tree, current, new)
    changelog = tree.read("CHANGELOG.md")
    if not section(changelog, UNRELEASED):
        raise SystemExit("refusing: CHANGELOG.md's Unreleased section is empty")
    tree.write("CHANGELOG.md", roll_changelog(changelog, new, today))
    tree.write("planner/__init__.py", VERSION_LINE.sub(f'__version__ = "{new}"', _init(tree)))
    action = IMAGE_LINE.sub(rf"\g<1>docker://{IMAGE}:{new}", tree.read("action.yml"))
    tree.write("action.yml", action)
    template = tree.read("templates/planner/template.yml")
    tree.write("templates/planner/template.yml", TEMPLATE_VERSION.sub(rf'\g<1>"{new}"', template))
    for name in tree.documents():
        tree.write(name, bump_references(tree.read(name), current, new))


def _init(tree: Tree) -> str:
    return tree.read("planner/__init__.py")


def _refuse_version(tree: Tree, current: str, new: str) -> None:
    if not SEMVER.fullmatch(new):
        raise SystemExit(f"refusing: {new!r} is not a semantic version X.Y.Z")
    if new in released_versions(tree):
        raise SystemExit(f"refusing: CHANGELOG.md already releases {new}")
    first = not released_versions(tree) and new == current
    if not first and _key(new) <= _key(current):
        raise SystemExit(f"refusing: {new} is not newer than {current}")


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def roll_changelog(changelog: str, new: str, today: datetime.date) -> str:
    heading = f"{UNRELEASED}\n\n## [{new}] - {today.isoformat()}"
    rolled = changelog.replace(UNRELEASED, heading, 1)
    base = f"https://github.com/{REPOSITORY}"
    links = re.compile(r"^\[Unreleased\]: .*$", re.M)
    fresh = f"[Unreleased]: {base}/compare/v{new}...HEAD\n[{new}]: {base}/releases/tag/v{new}"
    if links.search(rolled):
        return links.sub(fresh, rolled, count=1)
    return rolled.rstrip("\n") + f"\n\n{fresh}\n"


def bump_references(text: str, current: str, new: str) -> str:
    for pattern in (USES, COMPONENT, PINNED_IMAGE, INPUT_VERSION):
        text = pattern.sub(lambda match: match[0].replace(current, new), text)
    return text


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None, tree: Tree | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="exit 1 naming every version mismatch")
    check.add_argument("--tag", help="the release tag being built, such as v1.2.0")
    commands.add_parser("prepare", help="bump to VERSION").add_argument("version")
    commands.add_parser("notes", help="print VERSION's changelog section").add_argument("version")
    args = parser.parse_args(argv)
    tree = tree or Tree()
    if args.command == "notes":
        print(notes(tree, args.version))
        return 0
    if args.command == "prepare":
        prepare(tree, args.version, datetime.datetime.now(datetime.UTC).date())
    found = problems(tree, getattr(args, "tag", None))
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
