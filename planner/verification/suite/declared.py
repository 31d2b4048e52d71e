"""Where a Python project declares pytest, and what planner installs when it is missing.

Projects rarely install their test runner the way the detected setup does (requirements files,
pyproject.toml extras named test or dev): a released package lists pytest in tox.ini's
`deps`, a noxfile's `session.install(...)`, setup.cfg's `extras_require`, a dependency group,
or nowhere at all (plain `def test_…` files). declared_tests() reads those places without
running anything; what it finds is installed into the verification's own environment when the
test command's interpreter cannot import pytest (planner.verification.suite.runner).

Every requirement taken from the repository must read as a plain PEP 508 requirement (a name,
extras, a version and markers): a line such as `--index-url=…` or `pkg @ https://…` would be
an option or a download of the repository's choosing, so it is left out. Requirements keep
their environment markers (`pytest>=7,<8; python_version < '3.8'` beside `pytest>=8;
python_version >= '3.8'`): Declared.applicable() evaluates them for the interpreter that runs
the tests, so the one meant for it is installed, not the first one named.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

from planner.verification.suite.reading import plain_head

RUNNER = "pytest"
REQUIREMENT = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*"  # the distribution's name
    r"(\[[A-Za-z0-9._,\s-]*\])?"  # extras
    r"\s*([<>=!~]=?\s*[A-Za-z0-9.*+!_-]+(\s*,\s*[<>=!~]=?\s*[A-Za-z0-9.*+!_-]+)*)?"  # versions
    r"\s*(;\s*[A-Za-z0-9_.\s'\"<>=!~()-]*)?$"  # markers
)
ENTRY_COMMA = re.compile(r",\s*(?=[A-Za-z0-9])")
"""A comma between two entries of an ini value: the next one starts with a name."""
EXTRA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_READ = 200_000
"""Characters read of one file: a declaration is near the top, and a huge file is no help."""


@dataclass
class Declared:
    """The test dependencies a project declares next to pytest, and where."""

    requirements: list[str] = field(default_factory=list)
    """Requirement strings (`pytest>=7`, `pytest-cov`), in the order found, each distribution
    once per marker (`pytest>=8; python_version >= '3.8'` beside the one for older Pythons)."""
    extras: list[str] = field(default_factory=list)
    """The project's own extras that list pytest (`test`), installed with the project."""
    files: list[str] = field(default_factory=list)
    """Requirements files that list pytest outside the root's requirements*.txt."""
    where: list[str] = field(default_factory=list)
    """The files that declare it (`tox.ini`, `pyproject.toml`), for the history."""

    @property
    def found(self) -> bool:
        return bool(self.requirements or self.extras or self.files)

    def applicable(self, environment: Mapping[str, str]) -> list[str]:
        """The requirements whose markers hold in `environment` (an interpreter's marker
        values, as packaging.markers.default_environment() gives them), each distribution
        once: the first that applies decides its version."""
        names: set[str] = set()
        chosen = []
        for text in self.requirements:
            if _name(text) not in names and applies(text, environment):
                names.add(_name(text))
                chosen.append(text)
        return chosen

    def add(self, where: str, requirements: list[str], extras: Sequence[str] = ()) -> None:
        """Take `requirements` and `extras` from `where` when they include pytest."""
        kept = [text for text in (r.strip() for r in requirements) if _is_requirement(text)]
        named = [name for name in extras if EXTRA.match(name)]
        if not any(names_runner(text) for text in kept) and not named:
            return
        keys = {_key(text) for text in self.requirements}
        for text in kept:  # the first place that names a distribution decides its version
            if _key(text) not in keys:
                keys.add(_key(text))
                self.requirements.append(text)
        self.extras += [name for name in named if name not in self.extras]
        if where not in self.where:
            self.where.append(where)


def declared_tests(root: Path) -> Declared:
    """Every place of `root` that lists pytest, read; empty when none does."""
    declared = Declared()
    pyproject = _toml(root / "pyproject.toml")
    groups = dependency_groups(pyproject)
    _pyproject(declared, pyproject, groups)
    _setup_cfg(declared, root / "setup.cfg")
    _setup_py(declared, root / "setup.py")
    _tox(declared, "tox.ini", _text(root / "tox.ini"), groups)
    _tox_toml(declared, "tox.toml", _toml(root / "tox.toml"), groups)
    tox = _dig(pyproject, "tool", "tox")
    legacy = _dig(tox, "legacy_tox_ini")
    if isinstance(legacy, str):
        _tox(declared, "pyproject.toml", legacy, groups)
    _tox_toml(declared, "pyproject.toml", tox, groups)
    _noxfile(declared, root / "noxfile.py")
    _requirement_files(declared, root)
    return declared


# -- pyproject.toml ------------------------------------------------------------------------------


def _pyproject(
    declared: Declared, document: dict[str, Any], resolved: dict[str, list[str]]
) -> None:
    """Extras, PEP 735 dependency groups (`resolved`: their includes in place), hatch, pdm and
    poetry environments."""
    where = "pyproject.toml"
    extras = _dig(document, "project", "optional-dependencies")
    for name, items in _items(extras):
        if _lists_runner(items):
            declared.add(where, _strings(items), [name])
    for requirements in resolved.values():
        declared.add(where, requirements)
    for _name, environment in _items(_dig(document, "tool", "hatch", "envs")):
        if isinstance(environment, dict):
            declared.add(where, _strings(environment.get("dependencies")))
    for _name, items in _items(_dig(document, "tool", "pdm", "dev-dependencies")):
        declared.add(where, _strings(items))
    poetry = _dig(document, "tool", "poetry")
    groups = [_dig(poetry, "dev-dependencies")]
    groups += [_dig(group, "dependencies") for _, group in _items(_dig(poetry, "group"))]
    for group in groups:
        if isinstance(group, dict):
            declared.add(where, [name for name in group if name.lower() != "python"])


def dependency_groups(document: dict[str, Any]) -> dict[str, list[str]]:
    """PEP 735 `[dependency-groups]`: each group's requirements, its `{include-group = …}`
    entries replaced by the named group's (a group that includes itself, directly or through
    others, or names no group, contributes nothing more)."""
    tables = {name: items for name, items in _items(document.get("dependency-groups"))}
    return {name: _group(tables, name, ()) for name in tables}


def _group(tables: dict[str, Any], name: str, seen: tuple[str, ...]) -> list[str]:
    if name in seen or name not in tables:
        return []
    requirements: list[str] = []
    for item in tables[name] if isinstance(tables[name], list) else []:
        if isinstance(item, str):
            requirements.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
            requirements += _group(tables, item["include-group"], (*seen, name))
    return requirements


# -- setup.cfg and setup.py ----------------------------------------------------------------------


def _setup_cfg(declared: Declared, path: Path) -> None:
    parser = _ini(_text(path))
    if parser is None:
        return
    if parser.has_section("options.extras_require"):
        for name, value in parser.items("options.extras_require", raw=True):
            items = _lines(value)
            if _lists_runner(items):
                declared.add("setup.cfg", items, [name])
    if parser.has_option("options", "tests_require"):
        declared.add("setup.cfg", _lines(parser.get("options", "tests_require", raw=True)))


def _setup_py(declared: Declared, path: Path) -> None:
    """`extras_require={...}` and `tests_require=[...]` written as literals in setup()."""
    for node in _syntax_nodes(path):
        if not isinstance(node, ast.keyword) or node.arg not in ("extras_require", "tests_require"):
            continue
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, SyntaxError, TypeError):
            continue
        if node.arg == "tests_require":
            declared.add("setup.py", _strings(value))
            continue
        for name, items in _items(value):
            if _lists_runner(items):
                declared.add("setup.py", _strings(items), [name])


# -- tox and nox ---------------------------------------------------------------------------------


def _tox(declared: Declared, where: str, text: str, groups: dict[str, list[str]]) -> None:
    """`deps`, `dependency_groups` and `extras` of tox's test environments ([testenv] and
    [testenv:…])."""
    parser = _ini(text)
    if parser is None:
        return
    for section in parser.sections():
        if section != "testenv" and not section.startswith("testenv:"):
            continue
        deps = _lines(parser.get(section, "deps", raw=True, fallback=""))
        named = _lines(parser.get(section, "dependency_groups", raw=True, fallback=""))
        deps += [text for name in named for text in groups.get(name, [])]
        if _lists_runner(deps):
            extras = _lines(parser.get(section, "extras", raw=True, fallback=""))
            declared.add(where, deps, extras)


def _tox_toml(declared: Declared, where: str, tox: Any, groups: dict[str, list[str]]) -> None:
    """The same in tox's TOML form (tox.toml, pyproject's [tool.tox]): `env_run_base` and
    each `env.<name>`."""
    environments = [_dig(tox, "env_run_base"), *(e for _, e in _items(_dig(tox, "env")))]
    for environment in environments:
        if not isinstance(environment, dict):
            continue
        deps = _strings(environment.get("deps"))
        named = _strings(environment.get("dependency_groups"))
        deps += [text for name in named for text in groups.get(name, [])]
        if _lists_runner(deps):
            declared.add(where, deps, _strings(environment.get("extras")))


def _noxfile(declared: Declared, path: Path) -> None:
    """The string arguments of each `session.install(...)` call that installs pytest."""
    for node in _syntax_nodes(path):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "install"
        ):
            continue
        words = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
        texts = [word for word in words if isinstance(word, str)]
        extras = [_extras_of(text) for text in texts if text.startswith(".[")]
        if _lists_runner(texts):
            declared.add("noxfile.py", texts, [name for found in extras for name in found])


def _extras_of(text: str) -> list[str]:
    """`.[test,docs]` → [test, docs]."""
    inside = text.removeprefix(".[").removesuffix("]")
    return [name.strip() for name in inside.split(",") if name.strip()]


# -- requirements files --------------------------------------------------------------------------


def _requirement_files(declared: Declared, root: Path) -> None:
    """Requirements files in a `requirements/` folder (the root's requirements*.txt are the
    detected setup's) that list pytest."""
    folder = root / "requirements"
    if folder.is_symlink() or not folder.is_dir():
        return
    for path in sorted(folder.glob("*.txt")):
        if path.is_symlink() or not path.is_file():
            continue
        if _lists_runner(_lines(_text(path))):
            relative = path.relative_to(root).as_posix()
            declared.files.append(relative)
            if relative not in declared.where:
                declared.where.append(relative)


# -- reading -------------------------------------------------------------------------------------


def _name(text: str) -> str:
    """The distribution a requirement names, normalised (`Pytest_Cov` is `pytest-cov`)."""
    name = re.split(r"[\s\[<>=!~;]", text.strip(), maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def _key(text: str) -> tuple[str, str]:
    """A requirement's distribution and its markers: one entry is kept for each."""
    marker = text.split(";", 1)[1] if ";" in text else ""
    return _name(text), " ".join(marker.split())


def applies(text: str, environment: Mapping[str, str]) -> bool:
    """Whether requirement `text`'s markers hold in `environment` (True without markers); an
    unreadable marker never holds (pip would refuse the requirement)."""
    if ";" not in text:
        return True
    try:
        return Marker(text.split(";", 1)[1]).evaluate({"extra": "", **environment})
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


def names_runner(text: str) -> bool:
    return _name(text) == RUNNER


def _lists_runner(items: Any) -> bool:
    return any(names_runner(text) for text in _strings(items))


def _is_requirement(text: str) -> bool:
    return bool(text) and not text.startswith("-") and REQUIREMENT.match(text) is not None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [item for item in value if isinstance(item, str)]
    return []


def _items(value: Any) -> list[tuple[str, Any]]:
    return [(str(k), v) for k, v in value.items()] if isinstance(value, dict) else []


def _lines(value: str) -> list[str]:
    """The entries of an ini value: one a line (or comma-separated), comments left out. A
    comma inside a version range (`pytest>=7,<8`) separates no entries."""
    entries: list[str] = []
    for line in value.splitlines():
        line = line.split("#", 1)[0].strip()
        entries += [part.strip() for part in ENTRY_COMMA.split(line)] if "[" not in line else [line]
    return [entry for entry in entries if entry]


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_text(path))
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str) -> configparser.RawConfigParser | None:
    if not text:
        return None
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _syntax_nodes(path: Path) -> Iterator[ast.AST]:
    """Every node of the Python file's syntax tree; none when it does not parse."""
    try:
        tree = ast.parse(_text(path))
    except (SyntaxError, ValueError):
        return iter(())
    return ast.walk(tree)


def _text(path: Path) -> str:
    return plain_head(path, MAX_READ)
