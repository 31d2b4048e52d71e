"""The issue a pass works on, and how its untrusted text is made safe to quote in a prompt."""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, Field

MAX_BODY_BYTES = 1_000_000
"""Issue bodies and comments longer than this are cut for the prompt (with a note)."""

HTML_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\U000e0000-\U000e007f]"
)
"""Zero-width, bidi controls, soft hyphen and Unicode tag characters (invisible "ASCII")."""
HIDING_STYLE = (
    r"(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d])"
    r"|opacity\s*:\s*0(?![.\d]))"
)
HIDDEN_ELEMENT = re.compile(
    r"<([a-z][a-z0-9]*)\b[^>]*?\s(?:hidden\b|aria-hidden\s*=\s*\"true\"|style\s*=\s*\"[^\"]*"
    + HIDING_STYLE
    + r"[^\"]*\")[^>]*>.*?</\1\s*>",
    re.IGNORECASE | re.DOTALL,
)
"""An element a person never sees (hidden attribute or hiding style), with its content."""
MARKDOWN_COMMENT = re.compile(
    r"^[ \t]{0,3}\[[^\]\n]*\]:[ \t]*(?:#|<>)(?:[ \t]+(?:\([^\n]*\)|\"[^\n]*\"|'[^\n]*'))?[ \t]*$",
    re.MULTILINE,
)
"""`[//]: # (text)`: a link reference definition used as a comment; it never renders."""
FENCE_TAG = re.compile(r"<\s*/?\s*untrusted-data", re.IGNORECASE)
HIDDEN_ATTRIBUTES = re.compile(r"\s(?:hidden|style\s*=\s*\"[^\"]*display\s*:\s*none[^\"]*\")", re.I)


class Comment(BaseModel):
    author: str = ""
    body: str = ""
    created_at: str = ""
    id: str = ""


class IssueContext(BaseModel):
    """Everything a pass knows about its issue; title, body and comments are untrusted."""

    repository: str
    number: str
    title: str = ""
    body: str = ""
    comments: list[Comment] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    url: str = ""
    author: str = ""
    instruction: str = ""
    """Text a permitted user gave with the trigger (e.g. after `/planner`)."""


def sanitize_untrusted(text: str, limit_bytes: int = MAX_BODY_BYTES) -> str:
    """Strip what a person cannot see but a model would read, then cap the size."""
    cleaned = INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    cleaned = HTML_COMMENT.sub("", cleaned)
    cleaned = HIDDEN_ELEMENT.sub("", cleaned)
    cleaned = MARKDOWN_COMMENT.sub("", cleaned)
    cleaned = HIDDEN_ATTRIBUTES.sub(" ", cleaned)
    cleaned = FENCE_TAG.sub("[fence removed]", cleaned)  # data must not close its own fence
    return truncate_bytes(cleaned, limit_bytes)


def truncate_bytes(text: str, limit_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    kept = data[:limit_bytes].decode("utf-8", errors="ignore")
    return kept + f"\n\n[planner: truncated here; the original was {len(data)} bytes]"


def prompt_view(issue: IssueContext) -> dict[str, object]:
    """The issue as the prompt templates see it, every untrusted field sanitised."""
    return {
        "repository": issue.repository,
        "number": issue.number,
        "title": sanitize_untrusted(issue.title, 2_000),
        "body": sanitize_untrusted(issue.body) or "(the issue has no description)",
        "labels": [sanitize_untrusted(label, 200) for label in issue.labels],
        "comments": [
            {"author": c.author, "created_at": c.created_at, "body": sanitize_untrusted(c.body)}
            for c in issue.comments
        ],
        "instruction": sanitize_untrusted(issue.instruction, 20_000),
    }
