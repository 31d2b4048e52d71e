#!/usr/bin/env python3
"""Every link, anchor and page name in the README and docs/ resolves.

    python3 scripts/check_links.py            # README.md, CONTRIBUTING.md, SECURITY.md, docs/*.md
    python3 scripts/check_links.py PAGE...    # these pages

Checked on each page, outside code blocks:
- relative Markdown links and images, `[text](target)` and `[label]: target`, and HTML
  `href`/`src`: the file exists and, for a `#anchor` into a Markdown page, that page has the
  heading (GitHub's anchor rules, numbered duplicates included);
- a page named in the text (`how-it-works.md`, `docs/gitlab.md`, bare or in backticks): a page of
  that name exists beside the page or from the repository's root;
- no heading is empty.

Web links are not fetched. Prints one line per problem and exits 1 if there is any; CI runs it
(scripts/lint_ci.py) and tests/test_docs.py runs it on every page. Standard library only.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^ *(```|~~~).*?^ *\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"!?\[[^\]]*\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)", re.M)
HTML = re.compile(r"""\b(?:href|src)=["']([^"']+)["']""")
PAGE_NAME = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
PLACEHOLDER = re.compile(r"(?:^|/)[A-Z_]+(?:/|\.md$)")
HEADING = re.compile(r"^#{1,6}(?: (.*))?$", re.M)


def default_pages(root: Path = ROOT) -> list[Path]:
    names = ["README.md", "CONTRIBUTING.md", "SECURITY.md"]
    return [root / name for name in names] + sorted((root / "docs").glob("*.md"))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*]|<[^>]+>", "", heading).strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def prose(path: Path) -> str:
    """The page without its fenced code blocks."""
    return FENCE.sub("", path.read_text(encoding="utf-8"))


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(prose(path)):
        base = slug(heading)
        anchor, n = base, 0
        while anchor in found:
            n += 1
            anchor = f"{base}-{n}"
        found.add(anchor)
    return found


def problems(page: Path, root: Path = ROOT) -> list[str]:
    text = prose(page)
    found = [f"{page.name}: an empty heading" for h in HEADING.findall(text) if not h.strip()]
    found += _link_problems(page, text)
    found += _page_name_problems(page, INLINE_CODE.sub(_unquoted, text), root)
    return found


def _link_problems(page: Path, text: str) -> list[str]:
    text = INLINE_CODE.sub("", text)
    targets = [*LINK.findall(text), *REFERENCE.findall(text), *HTML.findall(text)]
    found = []
    for target in targets:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (page.parent / file).resolve() if file else page
        if not resolved.exists():
            found.append(f"{page.name}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            found.append(f"{page.name}: {target} (no such heading)")
    return found


def _unquoted(match: re.Match[str]) -> str:
    """Inline code that is only a page name counts as prose; any other code does not."""
    inner = match[0][1:-1]
    return inner if PAGE_NAME.fullmatch(inner) else ""


def _page_name_problems(page: Path, text: str, root: Path) -> list[str]:
    text = LINK.sub(lambda m: m[0].split("](", 1)[0], text)  # link targets are checked above
    text = HTML.sub("", REFERENCE.sub("", text))
    found = []
    for name in dict.fromkeys(PAGE_NAME.findall(text)):
        if PLACEHOLDER.search(name):  # .planner/issues/N.md: a name the reader fills in
            continue
        if not ((page.parent / name).exists() or (root / name).exists()):
            found.append(f"{page.name}: names {name}, which does not exist")
    return found


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    pages = [Path(name).resolve() for name in names] or default_pages()
    found = [problem for page in pages for problem in problems(page)]
    for problem in found:
        print(problem)
    print(f"links: {len(found)} problems in {len(pages)} pages" if found else "links: all resolve")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
