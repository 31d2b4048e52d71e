"""Every secret planner knows is redacted from everything it writes.

Known values are registered once (the forge token, the model key, the values of MCP headers and
`${VAR}` expansions, the password of a URL such as GitLab's CI_REPOSITORY_URL) and redact() then
replaces them, whatever their format, together with the forms a hostile program would use to get
one past a plain search: reversed, percent-encoded, hex, and base64 at any alignment (the core of
its encoding, so a secret inside a longer base64 text such as `x-access-token:<token>` is found
too). Token-looking strings of the usual formats and the userinfo of URLs are redacted even when
unknown.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from urllib.parse import quote, urlsplit

REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8
"""Shorter values are not redacted: replacing a short common string would garble text."""
B64_CORE_MIN = 12
"""A base64 core shorter than this would match ordinary text by chance."""

TOKEN_PATTERNS = (
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"gl(?:pat|dt|rt|cbt|ptt|ft|imt|agent|oas|soat)-[A-Za-z0-9_\-]{16,}",
    r"sk-[A-Za-z0-9_\-]{16,}",
    r"gsk_[A-Za-z0-9]{20,}",
    r"(?i:bearer)\s+[A-Za-z0-9._~+/\-]{16,}=*",
    r"(?i:basic)\s+[A-Za-z0-9+/]{16,}=*",
    r"AKIA[0-9A-Z]{16}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",
)
TOKEN_LIKE = re.compile("|".join(f"(?:{pattern})" for pattern in TOKEN_PATTERNS))
URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@:]*:[^/\s@]+@")
"""`scheme://user:password@` — GitLab's clone URL carries the job token this way."""
SECRET_NAME_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "JWT")
SECRET_PREFIXES = ("GITHUB_", "GITLAB_", "CI_JOB_", "OPENAI_", "ACTIONS_", "INPUT_")
"""INPUT_ holds a GitHub Action's inputs, which include the tokens planner was given."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it may hold a credential."""
    upper = name.upper()
    return any(word in upper for word in SECRET_NAME_WORDS) or upper.startswith(SECRET_PREFIXES)


class SecretRegistry:
    """The secret values of this process and every form of each that redact() replaces."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._forms: set[str] = set()
        self._ordered: tuple[str, ...] = ()

    def add(self, value: str | None) -> None:
        if not value or len(value.strip()) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            self._forms.update(secret_forms(value.strip()))
            self._ordered = tuple(sorted(self._forms, key=len, reverse=True))

    def add_all(self, values: Iterable[str | None]) -> None:
        for value in values:
            self.add(value)

    def forms(self) -> tuple[str, ...]:
        """Longest first, so a form inside a longer one is not replaced on its own first."""
        return self._ordered

    def clear(self) -> None:
        """Forget every value (tests only)."""
        with self._lock:
            self._forms.clear()
            self._ordered = ()


SECRETS = SecretRegistry()
"""The process-wide registry; everything planner writes goes through redact()."""


def register_secret(value: str | None) -> None:
    SECRETS.add(value)


CREDENTIAL_FILE_BYTES = 1_000_000
"""More of a credential file is not read (a key or a kubeconfig is a few kilobytes)."""
SECRET_LINE = re.compile(r"^[^\S\n]*[\"']?([\w.-]+)[\"']?\s*[:=]\s*[\"']?(.+?)[\"',]*\s*$", re.M)
"""`key: value`, `key = value`, `"key": "value",` lines of YAML, INI, .netrc-like and JSON files."""
PEM_BODY = re.compile(r"^[A-Za-z0-9+/=]{16,}$", re.M)


def register_file_secrets(data: bytes) -> None:
    """A credential file's content (a service account key, a kubeconfig, a .netrc): the whole
    text, every value of a key named like a credential, and every line of a PEM block, so a part
    of it copied into a tool's output is redacted too."""
    text = data[:CREDENTIAL_FILE_BYTES].decode("utf-8", errors="replace")
    if not text.strip():
        return
    SECRETS.add(text)
    values = _secret_values(text)
    SECRETS.add_all(values)
    for value in [text, *values]:
        SECRETS.add_all(PEM_BODY.findall(value.replace("\\n", "\n")))


def _secret_values(text: str) -> list[str]:
    """Values of keys named like a credential: from JSON when the file is JSON, else from
    `key: value` and `key = value` lines."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        pairs = SECRET_LINE.findall(text)
    else:
        pairs = list(_json_pairs(document))
    return [value for key, value in pairs if any(w in key.upper() for w in SECRET_NAME_WORDS)]


def _json_pairs(node: object, depth: int = 0) -> Iterator[tuple[str, str]]:
    if depth > 20:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str):
                yield str(key), value
            else:
                yield from _json_pairs(value, depth + 1)
    elif isinstance(node, list):
        for item in node:
            yield from _json_pairs(item, depth + 1)


def register_environment_secrets(env: Mapping[str, str]) -> None:
    """Every value of a variable named like a credential, and passwords inside URLs."""
    for name, value in env.items():
        if any(word in name.upper() for word in SECRET_NAME_WORDS):
            SECRETS.add(value)
        if "://" in value:
            SECRETS.add(url_password(value))


def url_password(url: str) -> str | None:
    try:
        return urlsplit(url.strip()).password
    except ValueError:
        return None


def redact(text: str, extra: Iterable[str] = (), *, patterns: bool = True) -> str:
    """`text` with every known secret (in any registered form) and the `extra` values replaced
    by REDACTED; with `patterns`, also token-like strings and URL passwords (unknown secrets,
    in tool output and in what people see)."""
    if not text:
        return text
    for form in (*_extra_forms(extra), *SECRETS.forms()) if extra else SECRETS.forms():
        if form in text:
            text = text.replace(form, REDACTED)
    if not patterns:
        return text
    if "://" in text and "@" in text:
        text = URL_USERINFO.sub(lambda match: match.group(1) + REDACTED + "@", text)
    return TOKEN_LIKE.sub(REDACTED, text)


def redact_data(value: object, *, patterns: bool = True) -> object:
    """redact() applied to every string inside JSON-like data (dicts, lists)."""
    if isinstance(value, str):
        return redact(value, patterns=patterns)
    if isinstance(value, dict):
        return {key: redact_data(item, patterns=patterns) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item, patterns=patterns) for item in value]
    return value


def redact_fields(fields: Mapping[str, object]) -> dict[str, object]:
    """The known secrets out of a history entry's fields (what reaches it was redacted with
    the patterns already: tool results at the registry, errors where they were made)."""
    return {key: redact_data(value, patterns=False) for key, value in fields.items()}


class RedactingFilter(logging.Filter):
    """A logging filter that redacts every record's message (and drops its arguments)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), ()
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def _extra_forms(values: Iterable[str]) -> list[str]:
    forms: set[str] = set()
    for value in values:
        if value and len(value) >= MIN_SECRET_LENGTH:
            forms.update(secret_forms(value))
    return sorted(forms, key=len, reverse=True)


def secret_forms(value: str) -> set[str]:
    """`value`, reversed, percent-encoded, hex, and its base64 cores (standard and URL-safe)."""
    forms = {value, value[::-1], quote(value, safe=""), value.encode().hex()}
    forms.update(base64_cores(value))
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def base64_cores(value: str) -> set[str]:
    """The part of base64(prefix + value + suffix) that depends only on `value`, for each of the
    three alignments, so the secret is found wherever it sits in an encoded text."""
    raw = value.encode()
    cores: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + raw).decode().rstrip("=")
        start = 4 if offset else 0  # the first group mixes in the prefix's bytes
        usable = (len(raw) + offset) // 3 * 4  # whole groups only: the last may mix the suffix
        core = encoded[start:usable]
        if len(core) >= B64_CORE_MIN:
            cores.update({core, core.replace("+", "-").replace("/", "_")})
    return cores
