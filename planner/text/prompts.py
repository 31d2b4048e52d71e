"""Prompt files live in planner/prompts/ (package data) and render strictly: an undefined
variable is an error.

Only values passed explicitly reach a template — never the process environment.
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from planner.text.budget import plan_within_budget
from planner.text.issue import fence_untrusted

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"  # planner/prompts


def prompts_dir() -> Path:
    override = os.environ.get("PLANNER_PROMPTS_DIR")
    return Path(override) if override else PROMPTS_DIR


@cache
def _environment(directory: str) -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(directory),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # `{{ text | untrusted }}`: model or repository text inside an <untrusted-data> fence
    environment.filters["untrusted"] = fence_untrusted
    environment.filters["gist"] = gist
    environment.filters["plan_within_budget"] = plan_within_budget
    return environment


GIST_CHARS = 90
"""A tool's description in a list of tools to plan with: what it does, not how to call it (the
tool's own schema says that when it is called)."""
GIST_END = re.compile(r":\s|;\s")


def gist(description: str) -> str:
    """The description's first clause (up to `: ` or `; `), within GIST_CHARS."""
    first = GIST_END.split(description, maxsplit=1)[0].strip()
    return first if len(first) <= GIST_CHARS else first[: GIST_CHARS - 1].rstrip() + "…"


def render(name: str, **context: Any) -> str:
    template = _environment(str(prompts_dir())).get_template(name)
    return template.render(**context).strip() + "\n"
