"""planner's layers: the import-linter contracts in pyproject.toml ([tool.importlinter]).

`python3 scripts/dev.py lint` runs them (`lint-imports`). These tests run the same contracts on
the same import graph (grimp: imports inside functions and under TYPE_CHECKING count), so the
suite fails on an import against the layers too, and show that each contract forbids what it
is there for: an import is added to the real graph and a contract must break, naming both
sides. What import-linter cannot say is checked by hand here: the root package holds only the
version and imports nothing, and CONTRIBUTING.md's layout table names every package.
"""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import configuration
from importlinter.application.use_cases import read_user_options
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parent.parent
CONTRACT_TYPES: dict[str, Any] = {
    "layers": LayersContract,
    "independence": IndependenceContract,
    "forbidden": ForbiddenContract,
    "acyclic_siblings": AcyclicSiblingsContract,
}


@cache
def contracts() -> tuple[dict[str, Any], ...]:
    """The contracts of pyproject.toml, read the way lint-imports reads them."""
    configuration.configure()
    options = read_user_options(str(ROOT / "pyproject.toml"))
    return tuple(options.contracts_options)


@cache
def planner_graph() -> grimp.ImportGraph:
    return grimp.build_graph("planner")


def broken(graph: grimp.ImportGraph) -> dict[str, str]:
    """id → what broke, for every contract the graph breaks."""
    found = {}
    for options in contracts():
        contract = CONTRACT_TYPES[options["type"]](
            name=options["name"],
            session_options={"root_packages": ["planner"]},
            contract_options=options,
        )
        check = contract.check(copy.deepcopy(graph), verbose=False)
        if not check.kept:
            found[options["id"]] = f"{options['name']}: {check.metadata}"
    return found


def with_import(source: str, target: str) -> grimp.ImportGraph:
    graph = copy.deepcopy(planner_graph())
    graph.add_import(importer=source, imported=target, line_number=1, line_contents="(test)")
    return graph


def test_dependencies_point_one_way() -> None:
    problems = broken(planner_graph())
    assert not problems, "contracts broken (run `lint-imports`):\n" + "\n".join(problems.values())


def test_no_import_circles() -> None:
    """Modules that import each other cannot be read, tested or moved apart; move what both
    need into a module of its own."""
    assert "acyclic" in {options["id"] for options in contracts()}
    assert "acyclic" not in broken(planner_graph())


def test_a_circle_is_found_and_named() -> None:
    """text.prompts imports text.issue; the other way round closes a circle."""
    problems = broken(with_import("planner.text.issue", "planner.text.prompts"))
    assert "acyclic" in problems
    assert "planner.text" in problems["acyclic"] and "prompts" in problems["acyclic"]


def test_a_submodule_imported_from_its_package_is_the_edge() -> None:
    """`from planner.interactive import transitions` imports the module transitions, not the
    package's __init__ (whose own imports would otherwise look like a circle)."""
    graph = planner_graph()
    imported = graph.find_modules_directly_imported_by("planner.interactive.terminal")
    assert "planner.interactive.transitions" in imported
    assert "planner.interactive" not in imported


def test_every_package_has_a_layer() -> None:
    """A new top-level package must be given a layer in pyproject.toml before it can land
    (the layers contract is exhaustive)."""
    graph = copy.deepcopy(planner_graph())
    graph.add_module("planner.newthing")
    problems = broken(graph)
    assert set(problems) == {"layers"} and "planner.newthing" in problems["layers"]


def test_the_root_package_imports_nothing() -> None:
    """planner/__init__.py holds only the version, so any layer may read it (`planner
    --version`); import-linter's contracts are about its children, not the container."""
    assert planner_graph().find_modules_directly_imported_by("planner") == set()


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("planner.engine.coordinator", "planner.replanning.phase", False),
        ("planner.engine.context", "planner.tools.registry", False),
        ("planner.model.llm", "planner.engine.context", False),
        ("planner.memory.history", "planner.model.llm", False),
        ("planner.core.errors", "planner.text.redaction", False),
        ("planner.ci.forges.github", "planner.ci.forges.gitlab", False),
        ("planner.ci.forges.gitlab", "planner.ci.forges.github", False),
        ("planner.ci.forges.base", "planner.ci.job", False),
        ("planner.storage.gitlab", "planner.ci.forges.http", False),
        ("planner.replanning.phase", "planner.refinement.phase", False),
        (
            "planner.verification.suite.runner",
            "planner.verification.reproduction.transcript",
            False,
        ),
        ("planner.verification.fixes.attempts", "planner.verification.phase", False),
        ("planner.engine.context", "planner.model.llm", True),
        ("planner.run.phases", "planner.replanning.phase", True),
        ("planner.ci.job", "planner.ci.forges.github", True),
        ("planner.ci.forges.github", "planner.ci.forges.base", True),
        ("planner.cli.main", "planner.ci.job", True),
        ("planner.verification.fixes.mutants", "planner.verification.suite.parse", True),
        ("planner.ci.forges.local", "planner.cli.issue_file", False),
        # the sandbox knows no tool; the kinds of tool never import each other
        ("planner.tools.sandbox.isolation", "planner.tools.commands.run_command", False),
        ("planner.tools.sandbox.safe_env", "planner.tools.registry", False),
        ("planner.tools.files.workspace", "planner.tools.commands.run_command", False),
        ("planner.tools.mcp.host", "planner.tools.files.paths", False),
        ("planner.tools.registry", "planner.tools.build", False),
        ("planner.tools.registry", "planner.tools.files.paths", False),
        ("planner.tools.commands.run_command", "planner.tools.sandbox.leftovers", True),
        # the model's side of a replan decision never reads the system's limits; the limits never
        # what becomes of a decision
        (
            "planner.replanning.prompting.prompt_builder",
            "planner.replanning.limits.controls",
            False,
        ),
        ("planner.replanning.limits.controls", "planner.replanning.execution.pipeline", False),
        ("planner.replanning.execution.pipeline", "planner.replanning.manager", False),
        ("planner.replanning.prompting.facts", "planner.replanning.port", False),
        ("planner.replanning.manager", "planner.replanning.tools", False),
        ("planner.replanning.execution.pipeline", "planner.replanning.limits.controls", True),
        ("planner.ci.handlers.stop", "planner.ci.handlers.interactive", False),
        ("planner.ci.issue_run", "planner.ci.handlers.issue_pass", False),
        ("planner.ci.events.triggers", "planner.ci.report.tracking", False),
    ],
)
def test_the_rule_names_what_it_forbids(source: str, target: str, allowed: bool) -> None:
    """The rule itself: a forbidden import breaks a contract that names both sides."""
    problems = broken(with_import(source, target))
    assert (not problems) is allowed, problems
    for why in problems.values():
        assert source.rsplit(".", 1)[0] in why and target.rsplit(".", 1)[0] in why


def test_an_unknown_package_has_no_layer() -> None:
    graph = copy.deepcopy(planner_graph())
    graph.add_module("planner.newthing")
    graph.add_module("planner.newthing.module")
    graph.add_import(
        importer="planner.newthing.module",
        imported="planner.engine.phase",
        line_number=1,
        line_contents="(test)",
    )
    assert "planner.newthing" in broken(graph).get("layers", "")


def test_contributing_names_every_package() -> None:
    """CONTRIBUTING.md's layout table describes the packages the contracts order."""
    table = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`planner/([a-z_]+)/", table))
    packages = {
        path.parent.name
        for path in (ROOT / "planner").glob("*/__init__.py")
        if path.parent.name != "prompts"
    }
    assert packages <= named, f"not in CONTRIBUTING.md's layout table: {sorted(packages - named)}"
