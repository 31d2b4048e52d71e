"""The issue a pass works on, and how its untrusted text is made safe to quote in a prompt."""

from __future__ import annotations

import re
import unicodedata

from pydantic import BaseModel, Field

MAX_BODY_BYTES = 1_000_000
"""Issue bodies and comments longer than this are cut for the prompt (with a note)."""
UNTRUSTED_BUDGET_BYTES = 200_000
"""The issue's body and comments together in one prompt (about 50k tokens): a stranger's flood
of comments cannot make every planning call cost the whole budget. The body gets up to half;
comments fill the rest newest first, and the older ones left out are named in a note."""
RECENT_COMMENTS = 10
RECENT_COMMENTS_BYTES = 8_000
"""Comments made since the plan, shown in every later prompt of its work (task, completion):
the newest first, at most this many and this much."""
INSTRUCTION_BYTES = 20_000
"""The instruction (after `/planner`, or the hand-over of an approved design) in one prompt."""
EDITED_NOTE = "[planner: this comment was edited after the run was triggered; text as it is now]"

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
HIDDEN_TAG = re.compile(
    r"<[a-z][a-z0-9]*\b[^<>]*?\s(?:hidden\b|aria-hidden\s*=\s*\"true\"|style\s*=\s*\"[^\"]*"
    + HIDING_STYLE
    + r"[^\"]*\")[^<>]*>",
    re.IGNORECASE,
)
"""An opening tag that hides what follows and has no closing tag: the markup goes, the words
after it stay (the sanitiser removes markup, never ordinary text such as "must not be hidden")."""


class Comment(BaseModel):
    author: str = ""
    body: str = ""
    created_at: str = ""
    id: str = ""
    edited_after_trigger: bool = False
    """Changed after the event that started the pass; the prompt says so."""
    on: str = ""
    """Where it was made when not on the issue ("pull request #5"): as untrusted as the rest."""


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
    cleaned = HIDDEN_TAG.sub("", cleaned)
    cleaned = FENCE_TAG.sub("[fence removed]", cleaned)  # data must not close its own fence
    return truncate_bytes(cleaned, limit_bytes)


def fence_untrusted(text: str, limit_bytes: int = MAX_BODY_BYTES) -> str:
    """Untrusted text for a reviewer (a diff, a model's summary) to read whole inside an
    `<untrusted-data>` fence: no pattern removes anything (an unclosed `<!--` in a diff hides
    nothing after it), invisible characters are shown as `[U+200B]`, and only what could close
    the fence is defused."""
    shown = INVISIBLE.sub(_codepoint, unicodedata.normalize("NFC", text))
    return truncate_bytes(FENCE_TAG.sub("[fence removed]", shown), limit_bytes)


def show_invisible(text: str) -> str:
    """`text` with every invisible character (zero-width, bidi controls, tags) written out as
    `[U+202E]`, so what a person reads is what the bytes say."""
    return INVISIBLE.sub(_codepoint, text)


def _codepoint(match: re.Match[str]) -> str:
    return f"[U+{ord(match.group()):04X}]"


def truncate_bytes(text: str, limit_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit_bytes:
        return text
    kept = data[:limit_bytes].decode("utf-8", errors="ignore")
    return kept + f"\n\n[planner: truncated here; the original was {len(data)} bytes]"


def prompt_view(
    issue: IssueContext, budget_bytes: int = UNTRUSTED_BUDGET_BYTES
) -> dict[str, object]:
    """The issue as the prompt templates see it, every untrusted field sanitised, body and
    comments within `budget_bytes` together."""
    body = sanitize_untrusted(issue.body, min(MAX_BODY_BYTES, budget_bytes // 2))
    return {
        "repository": issue.repository,
        "number": issue.number,
        "title": sanitize_untrusted(issue.title, 2_000),
        "body": body or "(the issue has no description)",
        "labels": [sanitize_untrusted(label, 200) for label in issue.labels],
        "comments": comments_within(issue.comments, budget_bytes - len(body.encode())),
        "instruction": instruction_view(issue.instruction),
    }


def instruction_view(text: str, limit_bytes: int = INSTRUCTION_BYTES) -> str:
    """The instruction within `limit_bytes`, its newest part kept: an approved design (its
    decisions, summary and task list) comes after the issue text it was made from, so the
    oldest issue text is what goes, and a note at the start says how much."""
    cleaned = sanitize_untrusted(text)
    data = cleaned.encode("utf-8")
    if len(data) <= limit_bytes:
        return cleaned
    kept = data[len(data) - limit_bytes :].decode("utf-8", errors="ignore")
    return (
        f"[planner: the first {len(data) - len(kept.encode()):,} bytes of this instruction "
        f"(the oldest issue text) were left out to keep it within {limit_bytes:,} bytes; "
        "the newest part follows]\n…" + kept
    )


def comments_within(comments: list[Comment], budget_bytes: int) -> list[dict[str, str]]:
    """The newest comments that fit in `budget_bytes`, oldest first, after a note naming the
    older ones left out (so the model knows the discussion is longer than what it sees)."""
    kept: list[dict[str, str]] = []
    remaining = max(0, budget_bytes)
    for index in range(len(comments) - 1, -1, -1):
        view = _comment_view(comments[index], remaining)
        size = len(view["body"].encode())
        if size > remaining:
            return [_dropped_note(comments[: index + 1]), *reversed(kept)]
        kept.append(view)
        remaining -= size
    return list(reversed(kept))


def comments_since(issue: IssueContext, seen: frozenset[str] | None) -> list[dict[str, str]]:
    """The issue's comments that came after the plan was made from those in `seen`: newest
    first, within RECENT_COMMENTS and RECENT_COMMENTS_BYTES, then a note on any left out.
    None (a plan whose comments were not recorded): none."""
    if seen is None:
        return []
    new = [c for c in reversed(issue.comments) if c.id and c.id not in seen]
    shown: list[dict[str, str]] = []
    remaining = RECENT_COMMENTS_BYTES
    for comment in new[:RECENT_COMMENTS]:
        view = _comment_view(comment, min(remaining, RECENT_COMMENTS_BYTES // 2) + 200)
        size = len(view["body"].encode())
        if size > remaining:
            break
        shown.append(view)
        remaining -= size
    if len(shown) < len(new):
        left = len(new) - len(shown)
        note = f"[planner: {left} older comment(s) since the plan are left out here]"
        shown.append({"author": "planner", "created_at": "", "body": note})
    return shown


def _comment_view(comment: Comment, limit: int) -> dict[str, str]:
    body = sanitize_untrusted(comment.body, max(0, min(MAX_BODY_BYTES, limit) - 200))
    if comment.edited_after_trigger:
        body = f"{EDITED_NOTE}\n{body}"
    author = f"{comment.author or 'unknown'} on {comment.on}" if comment.on else comment.author
    return {"author": author, "created_at": comment.created_at, "body": body}


def _dropped_note(dropped: list[Comment]) -> dict[str, str]:
    size = sum(len(c.body.encode()) for c in dropped)
    authors = ", ".join(sorted({c.author or "unknown" for c in dropped})[:10])
    text = (
        f"[planner: {len(dropped)} older comment(s), {size} bytes in all, by {authors}, were "
        "left out to keep the prompt within its budget for issue text. Ask on the issue if "
        "you need something they may have said.]"
    )
    return {"author": "planner", "created_at": dropped[-1].created_at, "body": text}
