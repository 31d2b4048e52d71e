#!/usr/bin/env python3
"""Prepare and check a release: one version in the package, action.yml, the changelog and the docs.

    python3 scripts/release.py check [--tag vX.Y.Z]  # exit 1 naming every mismatch
    python3 scripts/release.py prepare X.Y.Z         # bump, roll the changelog (main's commit)
    python3 scripts/release.py image                 # action.yml runs the image (the tag's commit)
    python3 scripts/release.py notes X.Y.Z           # the changelog's section (release notes)
    python3 scripts/release.py public-image IMAGE:TAG  # exit 1 unless anyone can pull it

The version lives in planner/__init__.py only (pyproject reads it). `prepare` writes it, turns the
changelog's Unreleased section into `## [X.Y.Z] - DATE` and moves every pinned release in the
README, docs/ and examples/ (`planner-dev/planner@vOLD` of `uses:` and pip, the GitLab component's
`@vOLD`, the image's `:OLD`, the component's `version: "OLD"`) and the GitLab template's default
version to the new one; action.yml keeps `image: Dockerfile`, so `@main` goes on building main's
code. `image` makes action.yml run the released image `docker://ghcr.io/planner-dev/planner:X.Y.Z`:
only on the commit the tag names, which is not merged into main (`check --tag` refuses a tag whose
action.yml builds the Dockerfile). `check` also refuses another owner than planner-dev on GitHub
and a component pinned without the tag's `v`. Standard library only.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import urllib.error
import urllib.request
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
COMPONENT_WITHOUT_V = re.compile(r"/planner/planner@(\d+\.\d+\.\d+)")
OTHER_OWNER = re.compile(r"(?:github\.com/|uses: +)(?!planner-dev/)([\w.-]+)/planner\b")
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
        """Pages and examples that may name a release of planner."""
        names = ["README.md", *sorted(p.name for p in self.path("docs").glob("*.md"))]
        names = [n if n == "README.md" else f"docs/{n}" for n in names]
        examples = sorted(self.path("examples").rglob("*.yml"))
        return names + [str(p.relative_to(self.root)) for p in examples]

    def pinning(self) -> list[str]:
        """Every file that names the package's version: what `prepare` rewrites."""
        version = package_version(self)
        fixed = ["planner/__init__.py", "templates/planner/template.yml"]
        named = [name for name in self.documents() if pinned_versions(self.read(name)) & {version}]
        return sorted(fixed + named)


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
    if tag is not None and action_image(tree) == "Dockerfile":
        found.append(
            f"action.yml builds the Dockerfile at the tag {tag}; the tag's commit runs the "
            "released image (run: release.py image)"
        )
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


def pinned_versions(text: str) -> set[str]:
    """The versions of planner a page or example names."""
    patterns = (USES, COMPONENT, PINNED_IMAGE, INPUT_VERSION)
    return {match[match.lastindex or 0] for pattern in patterns for match in pattern.finditer(text)}


def _document_problems(tree: Tree, version: str) -> list[str]:
    found = []
    for name in tree.documents():
        text = tree.read(name)
        for other in sorted(pinned_versions(text) - {version}):
            found.append(f"{name}: names planner {other}, not the package's {version}")
        for owner in sorted(set(OTHER_OWNER.findall(text))):
            found.append(f"{name}: names {owner}/planner on GitHub, not {REPOSITORY}")
        for bare in sorted(set(COMPONENT_WITHOUT_V.findall(text))):
            found.append(
                f"{name}: includes the component at {bare}; GitLab resolves the tag's exact "
                f"name, v{bare}"
            )
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
    template = tree.read("templates/planner/template.yml")
    tree.write("templates/planner/template.yml", TEMPLATE_VERSION.sub(rf'\g<1>"{new}"', template))
    for name in tree.documents():
        tree.write(name, bump_references(tree.read(name), current, new))


def pin_image(tree: Tree) -> None:
    """Make action.yml run the package version's released image: the tag's commit only, so that
    `@main` and every other branch go on building their own Dockerfile."""
    version = package_version(tree)
    if version not in released_versions(tree):
        raise SystemExit(
            f"refusing: CHANGELOG.md does not release {version} (run: release.py prepare)"
        )
    action = IMAGE_LINE.sub(rf"\g<1>docker://{IMAGE}:{version}", tree.read("action.yml"))
    tree.write("action.yml", action)


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


# --------------------------------------------------------------------------- the image


MANIFESTS = ", ".join(
    [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.v2+json",
    ]
)


def image_problem(reference: str) -> str | None:
    """Why `reference` (registry/name:tag) cannot be pulled without credentials; None if it can.

    Anonymous pulls as Docker does them: a pull token for the repository from the registry's
    token endpoint, then the tag's manifest. A registry on localhost is spoken to over HTTP."""
    name, _, tag = reference.rpartition(":")
    host, _, repository = name.partition("/")
    local = host.split(":")[0] in ("localhost", "127.0.0.1")
    base = f"{'http' if local else 'https'}://{host}"
    try:
        token = _anonymous_token(base, host, repository)
        headers = {"Accept": MANIFESTS, **({"Authorization": f"Bearer {token}"} if token else {})}
        url = f"{base}/v2/{repository}/manifests/{tag}"
        request = urllib.request.Request(url, method="HEAD", headers=headers)
        with urllib.request.urlopen(request, timeout=30):
            return None
    except urllib.error.HTTPError as exc:
        return f"{reference} cannot be pulled without credentials (HTTP {exc.code})"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return f"{reference}: the registry could not be asked ({exc})"


def _anonymous_token(base: str, host: str, repository: str) -> str:
    scope = f"repository:{repository}:pull"
    url = f"{base}/token?scope={scope}&service={host.split(':')[0]}"
    with urllib.request.urlopen(url, timeout=30) as response:
        answer = json.loads(response.read() or b"{}")
    token = answer.get("token") or answer.get("access_token") or ""
    return str(token)


PRIVATE_PACKAGE = """New packages on GitHub's container registry are private, so every action run
and GitLab job that pulls this image fails with 401 until the package is public. Make it public
once (an organization owner, or the package's admin): the package's page
https://github.com/orgs/{owner}/packages/container/package/{name} -> Package settings ->
Danger Zone -> Change visibility -> Public (it cannot be made private again), and, for an
organization, allow public packages first: Settings -> Packages -> Package creation -> Public.
Then re-run this job; the release continues."""


def public_image(reference: str) -> int:
    problem = image_problem(reference)
    if problem is None:
        print(f"{reference} can be pulled by anyone")
        return 0
    owner, name = REPOSITORY.split("/")
    print(f"{problem}\n{PRIVATE_PACKAGE.format(owner=owner, name=name)}", file=sys.stderr)
    return 1


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None, tree: Tree | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="exit 1 naming every version mismatch")
    check.add_argument("--tag", help="the release tag being built, such as v1.2.0")
    commands.add_parser("prepare", help="bump to VERSION").add_argument("version")
    commands.add_parser("image", help="action.yml runs the released image (the tag's commit)")
    commands.add_parser("notes", help="print VERSION's changelog section").add_argument("version")
    public = commands.add_parser("public-image", help="exit 1 unless anyone can pull IMAGE:TAG")
    public.add_argument("reference", help="such as ghcr.io/planner-dev/planner:1.2.0")
    args = parser.parse_args(argv)
    if args.command == "public-image":
        return public_image(args.reference)
    tree = tree or Tree()
    if args.command == "notes":
        print(notes(tree, args.version))
        return 0
    if args.command == "prepare":
        prepare(tree, args.version, datetime.datetime.now(datetime.UTC).date())
    if args.command == "image":
        pin_image(tree)
    found = problems(tree, getattr(args, "tag", None))
    for problem in found:
        print(problem, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
