"""The documentation a user reads: short README, generated pages that are fresh, links and anchors
that resolve, YAML examples that parse, every error message with its fix, no internal notes."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import planner
from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.ci.branch.lease import LeaseRules, acquire, release, restore_history
from planner.ci.forges.base import GitRemote
from planner.config import PlannerConfig, load_config
from planner.core.errors import ConfigError, PlannerError
from scripts import check_links, error_messages, example_run, gen_docs, lint_ci
from tests.fake_forge.core import IDENTITY, git

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted([README, ROOT / "CONTRIBUTING.md", ROOT / "SECURITY.md", *DOCS.glob("*.md")])
SHIPPED = sorted([README, ROOT / "SECURITY.md", *DOCS.glob("*.md")])
VALIDATOR = ROOT / "tests" / "node" / "node_modules" / ".bin" / "action-validator"
COMPONENT = ROOT / "templates" / "planner" / "template.yml"
YAML_BLOCK = re.compile(r"^( *)```yaml\n(.*?)^\1```", re.M | re.S)


# ---------------------------------------------------------------------------- the README


def code_blocks(text: str, language: str = "sh") -> list[list[str]]:
    """The command lines of each fenced block, comments dropped."""
    blocks = re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)
    lines = [[line.split("  #", 1)[0].strip() for line in block.splitlines()] for block in blocks]
    return [[line for line in block if line] for block in lines]


def test_the_readme_is_short_and_its_first_commands_install_and_run_the_demo() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    first = code_blocks(text)[0]
    assert first == [
        f'pip install "planner @ git+https://github.com/planner-dev/planner@v{planner.__version__}"',
        "planner demo",
    ]
    assert text.index(first[0]) < text.index("## ")  # on the first screen, before any section


def test_the_readmes_development_commands_are_under_contributing_and_ci_runs_its_test() -> None:
    text = README.read_text(encoding="utf-8")
    before, _, contributing = text.partition("\n## Contributing\n")
    assert "scripts/dev.py" not in before
    assert code_blocks(contributing) == [
        ["python3 scripts/dev.py demo", "python3 scripts/dev.py test"]
    ]
    ci_run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    [test_command] = [line for line in ci_run.splitlines() if line.endswith(" test")]
    assert test_command in code_blocks(contributing)[0]


def test_the_readme_follows_the_users_order() -> None:
    headings = re.findall(r"^## (.+)$", README.read_text(encoding="utf-8"), re.M)
    assert headings == [
        "Quick start on GitHub",
        "Quick start on GitLab",
        "Trying it locally",
        "Commands on the issue",
        "Documentation",
        "Contributing",
    ]


# ---------------------------------------------------------------------------- generated pages


def test_the_generated_pages_are_fresh() -> None:
    assert gen_docs.stale() == []


def test_a_stale_page_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    copy = tmp_path / "configuration.md"
    copy.write_text(gen_docs.CONFIG_DOC.read_text(encoding="utf-8").replace("`max_actions`", "`x`"))
    monkeypatch.setattr(gen_docs, "CONFIG_DOC", copy)
    assert [problem.split(" ")[0] for problem in _stale_names(monkeypatch, tmp_path)] == [
        "configuration.md"
    ]


def _stale_names(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[str]:
    monkeypatch.setattr(gen_docs, "ROOT", root)
    monkeypatch.setattr(gen_docs, "SCHEMA", gen_docs.SCHEMA)
    return [p for p in gen_docs.stale() if p.startswith("configuration.md")]


def leaf_keys(model: type[Any], prefix: str = "") -> list[tuple[str, str]]:
    """(section path, key) of every key that is not a section itself."""
    found = []
    for path, _model, leaves in gen_docs.sections(model, prefix):
        found += [(path, key) for key, _field in leaves]
    return found


def test_the_configuration_reference_has_every_key_under_its_section() -> None:
    text = gen_docs.CONFIG_DOC.read_text(encoding="utf-8")
    keys = leaf_keys(PlannerConfig)
    assert len(keys) > 100
    for path, key in keys:
        section = text.split(f" {path or 'Top-level keys'}\n", 1)[1].split("\n#", 1)[0]
        assert f"| `{key}` |" in section, f"{path}.{key}"
    assert '| `model` | string | `"gpt-4.1"` | `OPENAI_MODEL` | `model` |' in text


def test_the_schema_validates_config_files_as_the_loader_does() -> None:
    schema = json.loads(gen_docs.SCHEMA.read_text(encoding="utf-8"))
    sample = yaml.safe_load((ROOT / "examples" / "planner.yml").read_text(encoding="utf-8"))
    jsonschema.validate(sample, schema)
    for bad in (
        {"budget": {"max_actionz": 3}},
        {"llm": {"prices": {"m": {"prompt_per_million": "x"}}}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_the_cli_page_has_every_command_and_option() -> None:
    text = gen_docs.CLI_DOC.read_text(encoding="utf-8")
    from planner.cli.main import build_parser

    for name, parser in gen_docs.commands(build_parser(), "planner"):
        assert f"## {name}\n" in text
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text, f"{name} {option}"


def test_the_example_run_page_is_what_the_script_produces(tmp_path: Path) -> None:
    (tmp_path / "greeter").mkdir()
    comment, pull = example_run.run_example(tmp_path / "greeter")
    fresh = example_run.render(comment, pull)
    assert "/tmp" not in fresh and str(tmp_path) not in fresh
    # the demo's one task shown (reading the README is folded into it) says what it does
    assert "- [x] **write_guide**: Write CONTRIBUTING.md with the test command" in fresh
    assert example_run.page_texts(fresh) == {  # what the pictures of this run would show
        example_run.PICTURE.name: example_run.shown(comment),
        example_run.PULL_PICTURE.name: example_run.shown(str(pull["body"])),
    }
    assert "Tests (`pytest -q`): 2 passed" in fresh  # the demo's test and the issue's own
    assert "✅ The issue's test (`test_planner_issue_1.py`" in fresh
    page = (DOCS / "example-run.md").read_text(encoding="utf-8")
    assert _steady(fresh) == _steady(page), "run: python3 scripts/example_run.py --png"


def test_the_pictures_show_the_pages_run() -> None:
    record = json.loads(example_run.RECORD.read_text(encoding="utf-8"))
    page = (DOCS / "example-run.md").read_text(encoding="utf-8")
    problems = example_run.picture_problems(page, record, example_run.PICTURE.parent)
    assert problems == [], "run: python3 scripts/example_run.py --png"


def test_a_picture_of_another_run_is_found(tmp_path: Path) -> None:
    record = json.loads(example_run.RECORD.read_text(encoding="utf-8"))
    for name in record:
        (tmp_path / name).write_bytes((example_run.PICTURE.parent / name).read_bytes())
    page = (DOCS / "example-run.md").read_text(encoding="utf-8")
    [tokens] = re.findall(r"this pass: \d+ model calls, ([\d,]+) tokens", page)
    other_run = page.replace(f"{tokens} tokens", "7,670 tokens")
    (tmp_path / example_run.PULL_PICTURE.name).write_bytes(b"\x89PNG another picture")
    assert example_run.picture_problems(other_run, record, tmp_path) == [
        "tracking-comment.png shows another run than docs/example-run.md",
        "pull-request.png is not the picture the run rendered",
    ]


def _steady(text: str) -> str:
    """Without what changes from run to run: times."""
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "TIME", text)


# ---------------------------------------------------------------------------- links


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_anchor_and_page_name_resolves(page: Path) -> None:
    assert check_links.problems(page) == []


def test_ci_checks_the_links_of_the_readme_and_docs() -> None:
    assert sorted(check_links.default_pages()) == PAGES
    assert lint_ci.check_doc_links in lint_ci.CHECKS


def test_a_broken_link_anchor_or_page_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## Two words\n\n## Two words\n", encoding="utf-8")
    page = tmp_path / "b.md"
    page.write_text(
        "[ok](a.md#two-words) [twice](a.md#two-words-1) [gone](c.md) [bad](a.md#three)\n"
        '[self](#b) [web](https://x.y) ![img](pic.png) <img src="a.md">\n[ref]: gone.md\n'
        "See a.md, `plan-tool.md` and design.md; `.planner/issues/N.md` is a placeholder.\n"
        "```\n[inside a fence](nowhere.md) also.md\n```\n# B\n## \n",
        encoding="utf-8",
    )
    assert check_links.problems(page, root=tmp_path) == [
        "b.md: an empty heading",
        "b.md: c.md (no such file)",
        "b.md: a.md#three (no such heading)",
        "b.md: pic.png (no such file)",
        "b.md: gone.md (no such file)",
        "b.md: names plan-tool.md, which does not exist",
        "b.md: names design.md, which does not exist",
    ]
    assert check_links.main([str(page)]) == 1


def test_anchors_follow_githubs_rules() -> None:
    assert check_links.slug("The planner's pull requests") == "the-planners-pull-requests"
    assert check_links.slug("planning.replanning.llm_decision") == "planningreplanningllm_decision"
    assert check_links.slug("`llm.prices.NAME`") == "llmpricesname"


# ---------------------------------------------------------------------------- YAML examples


def yaml_examples() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for indent, block in YAML_BLOCK.findall(page.read_text(encoding="utf-8")):
            text = "\n".join(line[len(indent) :] for line in block.splitlines())
            found.append((f"{page.name}:{text.splitlines()[0][:40]}", text))
    return found


@pytest.mark.parametrize(("where", "text"), yaml_examples(), ids=lambda v: str(v)[:50])
def test_every_yaml_example_parses_as_what_it_shows(where: str, text: str, tmp_path: Path) -> None:
    document = yaml.safe_load(text)
    if isinstance(document, dict) and "jobs" in document:
        check_workflow(text, tmp_path)
    elif isinstance(document, dict) and set(document) <= set(PlannerConfig.model_fields):
        path = tmp_path / "planner.yml"
        path.write_text(text, encoding="utf-8")
        load_config(path, env={}, required_file=True)
    elif isinstance(document, dict) and "include" in document:
        check_component_include(document)
    elif isinstance(document, dict) and any(
        isinstance(v, dict) and "script" in v for v in document.values()
    ):
        assert all("script" in job for job in document.values()), where  # a GitLab job
    elif isinstance(document, list):  # workflow steps, shown as a part of a job
        job = {"runs-on": "ubuntu-latest", "steps": document}
        check_workflow(yaml.safe_dump({"on": "push", "jobs": {"job": job}}), tmp_path)
    else:
        assert set(document) == {"if"}, f"{where}: an example of an unknown kind"


def check_workflow(text: str, tmp_path: Path) -> None:
    path = tmp_path / "workflow.yml"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([str(VALIDATOR), str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def check_component_include(document: dict[str, Any]) -> None:
    spec = next(yaml.safe_load_all(COMPONENT.read_text(encoding="utf-8")))["spec"]["inputs"]
    for entry in document["include"]:
        assert entry["component"].endswith(f"/planner/planner@v{planner.__version__}")
        assert set(entry.get("inputs", {})) <= set(spec), entry


def test_a_config_example_with_a_misspelled_key_fails(tmp_path: Path) -> None:
    message = load_error(tmp_path / "planner.yml", "budget:\n  max_actionz: 3\n")
    assert "did you mean max_actions" in message


def load_error(path: Path, text: str) -> str:
    """The message of the ConfigError that loading `text` as the config file `path` raises."""
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(path, env={}, required_file=True)
    return str(error.value)


# ---------------------------------------------------------------------------- bad config input


def test_a_misspelled_key_names_the_closest_valid_one(tmp_path: Path) -> None:
    path = tmp_path / "planner.yml"
    message = load_error(path, "budgte:\n  max_actions: 3\nllm:\n  modle: x\n")
    assert "budgte = " in message and "did you mean budget?" in message
    assert "llm.modle = 'x'" in message and "did you mean model?" in message
    assert f"(from config file {path})" in message


def test_a_key_like_no_other_gets_no_guess(tmp_path: Path) -> None:
    message = load_error(tmp_path / "planner.yml", "zzzzzz: 1\n")
    assert "did you mean" not in message and "allowed here: approval" in message


def test_a_price_that_is_not_a_number_fails_at_load(tmp_path: Path) -> None:
    message = load_error(
        tmp_path / "planner.yml",
        "llm:\n  prices:\n    gpt-4.1:\n"
        "      {prompt_per_million: two dollars, completion_per_million: 8}\n",
    )
    assert "llm.prices.gpt-4.1.prompt_per_million = 'two dollars'" in message
    assert "valid number" in message


# ---------------------------------------------------------------------------- troubleshooting


def test_every_error_message_has_its_fix_in_troubleshooting() -> None:
    found = error_messages.messages()
    assert len(found) > 50
    assert error_messages.missing(error_messages.TROUBLESHOOTING.read_text(encoding="utf-8")) == []


def test_every_error_class_has_a_section_in_troubleshooting() -> None:
    text = error_messages.TROUBLESHOOTING.read_text(encoding="utf-8")
    trees = [
        __import__("ast").parse(p.read_text(encoding="utf-8")) for p in error_messages.sources()
    ]
    classes = error_messages.error_classes(trees) - {PlannerError.__name__}
    assert {"ConfigError", "ApiError", "GitError", "LeaseBusy"} <= classes
    headings = " ".join(re.findall(r"^## (.+)$", text, re.M))
    assert [name for name in sorted(classes) if name not in headings] == []


def test_a_new_message_without_a_fix_is_found() -> None:
    text = error_messages.TROUBLESHOOTING.read_text(encoding="utf-8")
    [first, *_] = error_messages.messages()
    assert error_messages.missing(text.replace(first.key, "")) != []


def test_every_message_a_user_sees_is_extracted_from_the_code() -> None:
    """Not only raised errors: what the job logs, a program exits with, an unexpected failure."""
    found = {(message.error, message.key) for message in error_messages.messages()}
    assert {
        ("console.error", "planner failed unexpectedly"),  # ci/action.py
        ("ValueError", "refusing to open a pull request from"),  # a forge's, as the job shows it
        ("ValueError", "planner's tracking comment is missing"),  # the sweep's
        ("sys.exit", "drop_privileges.py: the user did not change"),  # the tools' launcher
        ("stderr", "drop_privileges.py"),  # its "PROGRAM: not found"
        ("log.warning", "another run took this run's lease over: stopping"),
        ("log.exception", "closing a tool provider failed"),  # through a helper's parameter
        ("StopPass", "no plan before it is approved"),  # through the function's own variable
    } <= found
    assert any(
        error == "log.warning" and "left open to the tools' user" in key for error, key in found
    )


def test_the_extraction_follows_names_and_parameters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "planner"
    package.mkdir()
    (package / "module.py").write_text(
        textwrap.dedent(
            """
            import logging, sys
            log = logging.getLogger(__name__)
            TOO_MANY = "%s holds more than %d entries: left open"

            def quietly(action, message):
                try:
                    action()
                except Exception:
                    log.exception(message)

            def work(path):
                log.warning(TOO_MANY, path, 3)
                log.warning("could not read %s (%s); reading it again", path, "x")
                log.info("an information line that is not a problem")
                quietly(print, "closing the thing failed")
                problem = f"the file {path} is not a directory"
                sys.exit(problem)
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(error_messages, "ROOT", tmp_path)
    monkeypatch.setattr(error_messages, "PACKAGE", package)
    assert sorted((m.error, m.key) for m in error_messages.messages()) == [
        ("log.exception", "closing the thing failed"),
        ("log.warning", "entries: left open"),
        ("log.warning", "reading it again"),
        ("sys.exit", "is not a directory"),
    ]


# ---------------------------------------------------------------------------- internal text


INTERNAL = {
    "an absolute machine path": re.compile(r"(?<![\w.~])/(?:tmp|work|root|home)/"),
    "a work session": re.compile(
        r"\b(?:session \d|(?:this|another|other|shared) sessions?\b)", re.I
    ),
    "a branch of the work": re.compile(r"\bthis branch\b|\bbranch `\w+`", re.I),
    "the development machine": re.compile(
        r"\b\d-core\b|\bload average\b|\bthis machine\b|\bbusy (?:\d-core )?machine\b"
        # "measured on 2 CPU cores" is the neutral form
        r"|\b(?:\d+|one|two|three|four|six|eight|several) (?:shared )?cores\b",
        re.I,
    ),
    "how the work went": re.compile(r"(?<!\bis )(?<!\bare )(?<!\bwas )(?<!\bbe )\bused to\b", re.I),
    "a design-document reference": re.compile(r"\bseeds?/|\bADR-\d+", re.I),
}
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def internal_text(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = [
        f"{path.name}: {what}: {m[0]!r}" for what, rx in INTERNAL.items() for m in rx.finditer(text)
    ]
    if DATE.search(text) and "Generated by `" not in text:
        found.append(f"{path.name}: a date without the command that produced the page")
    return found


@pytest.mark.parametrize(
    "page",
    [*SHIPPED, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "examples").rglob("*.yml"))],
    ids=lambda p: p.name,
)
def test_no_internal_text_in_what_users_read(page: Path) -> None:
    """CONTRIBUTING.md too: facts and commands for developers, not how the work went."""
    assert internal_text(page) == []


def test_internal_text_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Measured in session 3 on this branch, 2-core machine, 2026-11-24; see /work/wt/x.\n"
        "Here 2 cores, two cores shared with other jobs, a busy machine. A plan used to go on.\n",
        encoding="utf-8",
    )
    found = internal_text(page)
    assert len(found) == 9, found
    assert sum("how the work went" in problem for problem in found) == 1


def test_neutral_hardware_lines_and_the_passive_are_not_internal_text(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Measured on 2 CPU cores. The lease is used to take turns; the tool was used to read it.\n",
        encoding="utf-8",
    )
    assert internal_text(page) == []


def shown_strings() -> list[tuple[str, str]]:
    """String constants of the code that writes comments, CLI output (the scripts' too) and
    prompts."""
    found = []
    sources = [*sorted((ROOT / "planner").rglob("*.py")), *sorted((ROOT / "scripts").glob("*.py"))]
    for path in sources:
        if "evaluation/suite" in path.as_posix() or "testing" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        unshown = {id(node.value) for node in ast.walk(tree) if _string_statement(node)}
        for node in ast.walk(tree):
            shown = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if shown and id(node) not in unshown:
                found.append((f"{path.name}:{node.lineno}", str(node.value)))
    for template in sorted((ROOT / "planner" / "prompts").glob("*.j2")):
        found.append((template.name, template.read_text(encoding="utf-8")))
    return found


def _string_statement(node: ast.AST) -> bool:
    """A string on its own as a statement: a docstring (of a module, class, function or attribute),
    never shown to users."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def test_no_internal_text_in_comments_cli_output_or_prompts() -> None:
    """Machine paths, machine-load notes and history; "session" is a word of the product here."""
    kinds = ("an absolute machine path", "the development machine", "how the work went")
    checks = {kind: INTERNAL[kind] for kind in kinds}
    found = [
        f"{where}: {what}"
        for where, text in shown_strings()
        for what, pattern in checks.items()
        if pattern.search(text)
    ]
    assert found == []


# ---------------------------------------------------------------------------- commands on the pages


def test_the_documented_restore_into_the_lease_ref_is_what_the_next_run_takes(
    tmp_path: Path,
) -> None:
    """docs/history.md's commands, run as written by a person between two runs on issue 1."""
    bare = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    who = Identity("planner", "planner@example.invalid")
    rules = LeaseRules(seconds=90, wait=5, identity=who)
    run = GitWorkspace(_fresh(tmp_path / "run-a"), GitRemote(str(bare)))
    left = tmp_path / "run-a" / "planning_history" / "0f1e.jsonl"
    left.parent.mkdir()
    left.write_text('{"type": "run_start"}\n', encoding="utf-8")
    release(run, acquire(run, 1, "run-a", rules), left, who)
    kept = tmp_path / "kept" / left.name  # the person's longer copy
    kept.parent.mkdir()
    kept.write_text('{"type": "run_start"}\n{"type": "plan"}\n{"type": "run_end"}\n')
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))

    blocks = re.findall(r"^( *)```sh\n(.*?)^\1```", (DOCS / "history.md").read_text(), re.M | re.S)
    [block] = [textwrap.dedent(text) for _, text in blocks if "commit-tree" in text]
    script = block.replace("issues/N", "issues/1").replace("FILE", str(kept))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=clone,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY},
    )
    assert done.returncode == 0, done.stderr
    assert "state: free" in done.stdout

    after = GitWorkspace(_fresh(tmp_path / "run-b"), GitRemote(str(bare)))
    target = tmp_path / "run-b" / "planning_history" / left.name
    target.parent.mkdir()
    target.write_text('{"type": "run_start"}\n', encoding="utf-8")  # its cache's shorter copy
    lease = acquire(after, 1, "run-b", rules)
    assert restore_history(after, lease, target)
    assert target.read_bytes() == kept.read_bytes()


def _fresh(root: Path) -> Path:
    git(root.parent, "init", "-q", str(root))
    return root
