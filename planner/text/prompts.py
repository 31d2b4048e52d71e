"""Prompt files live in planner/prompts/ (package data) and render strictly: an undefined
variable is an error.

Only values passed explicitly reach a template — never the process environment.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

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
    return environment


def render(name: str, **context: Any) -> str:
    template = _environment(str(prompts_dir())).get_template(name)
    return template.render(**context).strip() + "\n"
