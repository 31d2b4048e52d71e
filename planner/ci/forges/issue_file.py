"""Local issue files for `planner run`: JSON, YAML, or Markdown with a `# Title` first line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from planner.core.errors import UserInputError
from planner.text.issue import Comment, IssueContext


def load_issue_file(path: Path, repository: str, issue_id: str | None = None) -> IssueContext:
    if not path.is_file():
        raise UserInputError(f"issue file {path} does not exist")
    text = path.read_bytes().decode("utf-8", errors="replace")
    data = (
        _markdown(text, path)
        if path.suffix.lower() in (".md", ".markdown", ".txt")
        else _mapping(text, path)
    )
    data.setdefault("number", issue_id or _number_from_name(path))
    if issue_id:
        data["number"] = issue_id
    data["number"] = str(data["number"])
    data.setdefault("repository", repository)
    data["comments"] = [_comment(c) for c in data.get("comments") or []]
    try:
        return IssueContext.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise UserInputError(f"issue file {path} is not a valid issue: {problems}") from None


def _mapping(text: str, path: Path) -> dict[str, Any]:
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise UserInputError(f"issue file {path} cannot be parsed: {exc}") from None
    if not isinstance(data, dict):
        raise UserInputError(f"issue file {path} must hold a mapping with title and body")
    allowed = set(IssueContext.model_fields)
    return {key: value for key, value in data.items() if key in allowed}


def _markdown(text: str, path: Path) -> dict[str, Any]:
    first, _, rest = text.partition("\n")
    if first.startswith("# "):
        return {"title": first[2:].strip(), "body": rest.strip()}
    return {"title": path.stem, "body": text.strip()}


def _comment(raw: Any) -> Comment:
    if isinstance(raw, str):
        return Comment(body=raw)
    if isinstance(raw, dict):
        return Comment.model_validate(
            {k: str(v) for k, v in raw.items() if k in Comment.model_fields}
        )
    raise UserInputError(f"a comment must be text or a mapping, not {type(raw).__name__}")


def _number_from_name(path: Path) -> str:
    digits = re.findall(r"\d+", path.stem)
    return digits[-1] if digits else path.stem
