"""Words of a text as relevance checks see them: lower case, identifiers split at `_` and
camelCase humps, common words dropped."""

from __future__ import annotations

import re

WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
CAMEL = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
STOPWORDS = frozenset(
    re.split(
        r"\s+",
        """the and for with that this from into when what which should would could have has was
    are not but you your our can may must will its use used using add make please also there
    then than them they need needs file files code issue function method class test tests
    fix bug new one all any each some more like just only get set""",
    )
)
"""Words too common to say anything about where the work is or what a question is about."""


def words_of(text: str) -> frozenset[str]:
    words: set[str] = set()
    for token in WORD.findall(text.replace("_", " ")):
        words.update(part.lower() for part in CAMEL.findall(token))
        words.add(token.lower())
    return frozenset(w for w in words if len(w) >= 3 and w not in STOPWORDS)
