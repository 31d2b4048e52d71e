"""Which files matter for an issue: the ones it names first, then the ones whose paths and
symbols share its words, then shallow files (a README says more than a fixture three levels
down)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from planner.grounding.index import FileEntry
from planner.text.words import STOPWORDS, words_of

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOKEN = re.compile(r"[\w./\-]{3,200}")
PATH_LIKE = re.compile(r"^(?:[\w.\-]+/)*[\w.\-]*\w\.[A-Za-z0-9]{1,8}$|^[\w.\-]+(?:/[\w.\-]+)+$")
MAX_ISSUE_CHARS = 100_000
"""Ranking reads at most this much of the issue (a megabyte of text adds nothing)."""


@dataclass(frozen=True)
class IssueTerms:
    words: frozenset[str]
    """Lower-case words of the issue and the parts of its identifiers."""
    identifiers: frozenset[str]
    """Identifiers as written (lower case), e.g. parse_config or parseconfig."""
    paths: tuple[str, ...]
    """Path-like tokens in the order the issue mentions them."""


def issue_terms(text: str) -> IssueTerms:
    text = text[:MAX_ISSUE_CHARS]
    tokens = [t.removeprefix("./").rstrip(".-/") for t in TOKEN.findall(text)]
    paths = tuple(dict.fromkeys(t for t in tokens if PATH_LIKE.match(t)))
    prose = " ".join(t for t in tokens if t not in paths)  # a path's parts are not symbols
    identifiers = frozenset(i.lower() for i in IDENTIFIER.findall(prose) if len(i) >= 3)
    return IssueTerms(words_of(text), identifiers - STOPWORDS, paths)


def named_files(terms: IssueTerms, paths: Iterable[str]) -> list[str]:
    """Files the issue names, by full path or (when unambiguous) by file name."""
    known = list(paths)
    by_name: dict[str, list[str]] = {}
    for path in known:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    exact = set(known)
    found: list[str] = []
    for mention in terms.paths:
        if mention in exact:
            found.append(mention)
        elif len(by_name.get(mention, [])) == 1:
            found.append(by_name[mention][0])
        else:
            found += [p for p in known if p.endswith("/" + mention)][:1]
    return list(dict.fromkeys(found))


def defines(entry: FileEntry, terms: IssueTerms) -> bool:
    """The file defines a symbol the issue names (`to_fahrenheit`): it names the file too."""
    names = {s.name.split("(", 1)[0].lower() for s in entry.outline.symbols}
    return bool(names & terms.identifiers)


def ranked(entries: list[FileEntry], terms: IssueTerms, named: list[str]) -> list[FileEntry]:
    first = {path: index for index, path in enumerate(named)}
    scored = [(_score(e, terms, first), e) for e in entries]
    scored.sort(key=lambda item: (-item[0], item[1].path.count("/"), item[1].path))
    return [entry for _, entry in scored]


def _score(entry: FileEntry, terms: IssueTerms, named: dict[str, int]) -> float:
    if entry.path in named:
        return 10_000 - named[entry.path]
    base = -0.5 * entry.path.count("/") - (1 if entry.kind != "text" else 0)
    if entry.path.lower().startswith("readme"):
        base += 4
    names = [s.name.split("(", 1)[0] for s in entry.outline.symbols]
    docs = " ".join([entry.outline.summary, *(s.doc for s in entry.outline.symbols)])
    blob = " ".join([entry.path, *names, docs]).lower()
    if not any(word in blob for word in terms.words):
        return base  # shares no word with the issue (most files): skip the word splitting
    directory, _, name = entry.path.rpartition("/")
    score = 30.0 * len({n.lower() for n in names} & terms.identifiers)
    score += 8.0 * len(words_of(name) & terms.words) + 3.0 * len(_words(directory) & terms.words)
    score += 2.0 * min(5, len(words_of(" ".join(names)) & terms.words))
    score += min(6, len(words_of(docs) & terms.words))
    return base + score


@functools.lru_cache(maxsize=4_096)
def _words(directory: str) -> frozenset[str]:
    """Directory words, computed once per directory rather than once per file."""
    return words_of(directory)
