"""Markdown read the way a forge renders it: CommonMark, parsed by markdown-it-py.

Two questions are answered here, and only with a real parser, because regular expressions keep
missing CommonMark's cases (an indented code block, a fence whose inner ``` line does not close
it, a lazily continued blockquote line, a command inside a multi-line HTML attribute):

- which lines of a comment a person wrote as plain text at the top level (`top_level_text`):
  the only place a command or an approval can be (planner.ci.events.triggers);
- which links, images and autolinks a text renders (`rendered_links`): planner's sanitiser
  (planner.text.inert) checks its own output with it;
- which lines of a reply start a top-level list item, and which lie deeper (`outline`): only
  top-level items can be answers to a planning session's questions (planner.interactive.replies).

GitHub adds autolinks for bare `www.`/`http(s)://` addresses and e-mail addresses (GFM's
autolink extension), which CommonMark lacks: `rendered_links` finds those in the text too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

PARSER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
"""GitHub and GitLab render HTML blocks and inline HTML (then sanitise them): so do we."""
MASK = "\x00"
"""Stands for a character of inline code or inline HTML: nothing matches it."""
BARE_LINK = re.compile(
    r"(?i)(?:\b[a-z][a-z0-9+.\-]*://|\bwww\.|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+)"
)
"""What GFM's autolink extension (and GitLab) turn into a link without any markup."""


@dataclass(frozen=True)
class Paragraph:
    """A paragraph at the top level of a document: its text as rendered, and the source lines
    that follow it."""

    masked: str
    """The visible text, inline code and inline HTML replaced by MASK (same length as `shown`)."""
    shown: str
    """The visible text, inline code kept as written (between backticks)."""
    after: str
    """The source text after the paragraph, as written."""


def top_level_paragraphs(text: str) -> Iterator[Paragraph]:
    """Each paragraph at the top level of `text`: never one inside a quote, a list, a table, an
    HTML block or a code block. Soft and hard line breaks read as newlines."""
    lines = text.splitlines(keepends=True)
    tokens = PARSER.parse(text)
    for index, token in enumerate(tokens):
        if token.type != "paragraph_open" or token.level != 0:
            continue
        inline = tokens[index + 1]
        masked, shown = _visible(inline.children or [])
        end = token.map[1] if token.map else len(lines)
        yield Paragraph(masked, shown, "".join(lines[end:]))


def _visible(children: Sequence[Token]) -> tuple[str, str]:
    masked: list[str] = []
    shown: list[str] = []
    for child in children:
        if child.type == "text":
            masked.append(child.content)
            shown.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            masked.append("\n")
            shown.append("\n")
        elif child.type == "code_inline":
            code = f"{child.markup}{child.content}{child.markup}"
            masked.append(MASK * len(code))
            shown.append(code)
        elif child.type == "html_inline":
            masked.append(MASK * len(child.content))
            shown.append(MASK * len(child.content))
        elif child.type == "image":  # its alt text is what a reader sees
            inner_masked, inner_shown = _visible(child.children or [])
            masked.append(inner_masked)
            shown.append(inner_shown)
    return "".join(masked), "".join(shown).replace(MASK, " ")


@dataclass(frozen=True)
class Outline:
    """Where a text's lines stand: which start an item of a list at the top level (and which
    list), and which lie deeper (in a nested list, a quote, a code or HTML block, or indented
    into a list item)."""

    top_items: dict[int, int]
    """Line index -> the index of the top-level list it starts an item of."""
    deeper: frozenset[int]
    """Line indexes inside a nested list, a blockquote, a code block or an HTML block, and the
    indented lines of a top-level list item after its first."""


DEEP_BLOCKS = ("fence", "code_block", "html_block")


def outline(text: str) -> Outline:
    """The list structure of `text` as CommonMark reads it (line indexes count from 0)."""
    source = text.splitlines()
    top_items: dict[int, int] = {}
    deeper: set[int] = set()
    lists = quotes = 0
    top_list = -1
    for index, token in enumerate(PARSER.parse(text)):
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists += 1
            top_list = index if lists == 1 else top_list
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif token.type in ("blockquote_open", "blockquote_close"):
            quotes += 1 if token.type == "blockquote_open" else -1
        if token.map is None:
            continue
        if token.type == "list_item_open" and lists == 1 and not quotes:
            top_items[token.map[0]] = top_list
            deeper.update(_indented(source, token.map[0] + 1, token.map[1]))
        elif (lists > 1 or quotes or token.type in DEEP_BLOCKS) and token.nesting != -1:
            deeper.update(range(*token.map))
    return Outline(top_items, frozenset(deeper))


def _indented(lines: list[str], start: int, end: int) -> list[int]:
    """The lines of an item after its first that are indented into it: its own text (`2.
    admins` under `- staff` is no list of its own in CommonMark, only its paragraph's next
    line). A lazy line (not indented) reads at the top level, as a person wrote it."""
    return [i for i in range(start, min(end, len(lines))) if lines[i][:1] in (" ", "\t")]


def rendered_links(text: str) -> list[str]:
    """Every destination `text` renders as a link or image: inline, reference and `<…>`
    autolinks, images, raw `<a href>`/`<img src>` HTML, and GFM's bare autolinks."""
    found: list[str] = []
    for token in PARSER.parse(text):
        if token.type in ("html_block",):
            found += _html_links(token.content)
        for child in token.children or []:
            found += _links_of(child)
    return found


def _links_of(token: Token) -> list[str]:
    if token.type == "link_open":
        return [str(token.attrGet("href") or "")]
    if token.type == "image":
        inner = [link for child in token.children or [] for link in _links_of(child)]
        return [str(token.attrGet("src") or ""), *inner]
    if token.type == "html_inline":
        return _html_links(token.content)
    if token.type == "text":
        return [match.group(0) for match in BARE_LINK.finditer(token.content)]
    return []


HTML_LINK = re.compile(r"(?i)\b(?:href|src|srcset|action|formaction|poster|data)\s*=")


def _html_links(html: str) -> list[str]:
    """Attributes that load or link something. Forges drop most HTML, but not all of it."""
    return [html[match.start() :] for match in HTML_LINK.finditer(html)]
