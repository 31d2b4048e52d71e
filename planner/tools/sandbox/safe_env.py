"""What the programs planner starts may see and run: never its secrets, git never repository code.

Programs get an allow-listed environment (scrubbed_environment): a variable reaches them only
when it is on ALLOWED_VARIABLES or the user named it in `tools.env_passthrough`, and never when it
is named like a credential (is_secret_name). A deny-list alone misses what no rule foresaw, such
as GitLab's CI_REPOSITORY_URL, which carries the job token in its userinfo. git also runs with
a fixed safe configuration whatever the repository's config says (git_argv with the repository's
root): no hooks, no fsmonitor, no filter, textconv or merge drivers but git-lfs's own, no proxy
but the one planner's own environment names, TLS verification on, no credential helper, no
signing or editor program. A pass may plant any of these in `.git/config` through an allowed
command or an MCP server wherever tools can write `.git` (planner.tools.sandbox.isolation keeps it
root's while tools run as another user), and `commit --no-verify` would still run post-commit.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from planner.text.redaction import is_secret_name

__all__ = [
    "git_argv",
    "git_environment",
    "git_run",
    "git_text",
    "is_secret_name",
    "scrubbed_environment",
]

URL_WITH_PASSWORD = re.compile(r"://[^/\s@:]*:[^/\s@]+@")

GIT_SAFETY = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
    ("credential.helper", ""),  # resets the list: no helper from any config runs
    ("http.sslVerify", "true"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("sequence.editor", "true"),
)
"""Passed as `-c` to every git command: what no repository may switch on for planner's git."""
DRIVER_KEYS = re.compile(
    r"^(?:(filter)\.(.+)\.(clean|smudge|process|required)"
    r"|(diff)\.(.+)\.(textconv|command)|(merge)\.(.+)\.(driver)"
    r"|(http)\.(.+)\.(proxy|sslverify))$",
    re.IGNORECASE,
)
"""Settings of a named filter, diff or merge driver, and URL-specific proxy and TLS settings:
each one found in the repository's config is overridden (repository_overrides)."""
LFS_FILTER = {
    "clean": "git-lfs clean -- %f",
    "smudge": "git-lfs smudge -- %f",
    "process": "git-lfs filter-process",
    "required": "true",
}
"""git-lfs's own driver, exactly as `git lfs install` writes it: the one filter that stays on."""
OVERRIDES = {
    "filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
    "diff": {"textconv": "cat", "command": ""},
    "merge": {"driver": "false"},
    "http": {"sslverify": "true"},
}
"""What a driver's setting becomes: an empty filter command switches the filter off, `cat` is
the identity textconv, a merge driver that fails is a conflict. An external diff command cannot
be switched off by a setting: planner's diffs pass --no-ext-diff."""
INHERITED_GIT_CONFIG = ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
"""Config given to git through the environment; dropped, so only planner's own applies."""


ALLOWED_VARIABLES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR", "LANG", "LANGUAGE",
        "CI", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
    }
)  # fmt: skip
"""What every program planner starts may inherit (plus LC_*): locale, paths, certificates and
proxies (a proxy whose URL holds a password is dropped)."""


def scrubbed_environment(env: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed part of `env` (ALLOWED_VARIABLES, LC_*, `passthrough`), never a
    variable named like a credential, nor a value holding a URL with a password."""
    wanted = ALLOWED_VARIABLES | set(passthrough)
    return {
        name: value
        for name, value in env.items()
        if (name in wanted or name.startswith("LC_"))
        and not is_secret_name(name)
        and not URL_WITH_PASSWORD.search(value)
    }


def git_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` scrubbed of secrets and inherited git config; git never waits for a password."""
    kept = {
        name: value
        for name, value in scrubbed_environment(env).items()
        if not name.upper().startswith(INHERITED_GIT_CONFIG) and name != "GIT_CONFIG_PARAMETERS"
    }
    kept.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", SSH_ASKPASS="true")
    return kept


def git_argv(
    *args: str, config: tuple[tuple[str, str], ...] = (), repository: Path | None = None
) -> list[str]:
    """`git <args>` with GIT_SAFETY, `repository`'s overrides and `config` as `-c` options (never
    put secrets in them). Pass `repository` (the work tree git runs in) for every command in a
    tree a pass's tools could reach: its config is then read and neutralised first."""
    found = repository_overrides(repository) if repository is not None else ()
    settings = (*GIT_SAFETY, *found, *config)
    options = [part for key, value in settings for part in ("-c", f"{key}={value}")]
    return ["git", *options, *args]


def git_run(
    repository: Path,
    *args: str,
    stdin: bytes | None = None,
    timeout: float | None = None,
    check: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """`git <args>` (git_argv) run in the work tree `repository` with git_environment, its
    output captured as bytes; `check` raises CalledProcessError when git fails."""
    return _git(repository, args, (), input=stdin, timeout=timeout, check=check)


def git_text(
    repository: Path,
    *args: str,
    config: tuple[tuple[str, str], ...] = (),
    stdin: str | None = None,
    errors: str = "strict",
    check: bool = False,
) -> subprocess.CompletedProcess[str]:
    """git_run's command with `config` as `-c` options, its output read as text (`errors`: how
    bytes the locale's encoding cannot read are decoded)."""
    return _git(repository, args, config, input=stdin, text=True, errors=errors, check=check)


def _git(
    repository: Path, args: tuple[str, ...], config: tuple[tuple[str, str], ...], **options: Any
) -> subprocess.CompletedProcess[Any]:
    return subprocess.run(
        git_argv(*args, config=config, repository=repository),
        cwd=repository,
        env=git_environment(os.environ),
        capture_output=True,
        **options,
    )


def repository_overrides(repository: Path) -> tuple[tuple[str, str], ...]:
    """`-c` settings that switch off every driver and URL-specific proxy or TLS setting the
    config of `repository` (local, global, system, included files) holds, but git-lfs's own.
    Read again whenever one of those files changes."""
    return _overrides(str(repository), _config_signature(repository), proxy_setting(os.environ))


PROXY_VARIABLES = (
    "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"
)  # fmt: skip


def proxy_setting(env: Mapping[str, str]) -> str:
    """The proxy planner's own environment names ('' for none): every `http.<url>.proxy` a
    repository sets is replaced by it, so git's traffic goes where the runner sends it."""
    for name in (
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ):
        if env.get(name):
            return env[name]
    return ""


def _config_signature(repository: Path) -> tuple[tuple[str, int, int, int], ...]:
    """(path, inode, size, mtime) of each config file git may read for `repository`: a change
    to any of them (a pass writing `.git/config`) makes the overrides be read again."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    candidates = [
        repository / ".git" / "config",
        repository / ".git" / "config.worktree",
        *([Path(home, ".gitconfig")] if home else []),
        *([Path(xdg, "git", "config")] if xdg else []),
        Path("/etc/gitconfig"),
        *_included(repository),
    ]
    signature = []
    for path in candidates:
        try:
            status = os.stat(path)
        except OSError:
            continue
        signature.append((str(path), status.st_ino, status.st_size, status.st_mtime_ns))
    return tuple(signature)


def _included(repository: Path) -> list[Path]:
    """Files the repository's own config includes (read by `_overrides` too)."""
    path = repository / ".git" / "config"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    found = re.findall(r"(?im)^\s*path\s*=\s*(.+?)\s*$", text)
    return [(path.parent / os.path.expanduser(item.strip('"'))) for item in found]


@functools.lru_cache(maxsize=64)
def _overrides(
    repository: str, signature: tuple[tuple[str, int, int, int], ...], proxy: str
) -> tuple[tuple[str, str], ...]:
    del signature  # part of the cache key only
    settings = [("http.proxy", proxy)]
    for key, value in _config_list(repository):
        match = DRIVER_KEYS.match(key)
        if match is None:
            continue
        kind, name, field = (part for part in match.groups() if part is not None)
        kind, field = kind.lower(), field.lower()
        if kind == "filter" and name.lower() == "lfs" and LFS_FILTER.get(field) == value:
            continue
        if kind == "http":
            settings.append((key, proxy if field == "proxy" else "true"))
        else:
            settings.append((key, OVERRIDES[kind][field]))
    return tuple(dict.fromkeys(settings))


def _config_list(repository: str) -> list[tuple[str, str]]:
    """Every (key, value) git reads in `repository`; reading config runs no program."""
    try:
        done = subprocess.run(
            git_argv("config", "--includes", "--list", "-z"),
            cwd=repository,
            env=git_environment(os.environ),
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    entries = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    pairs = (entry.partition("\n") for entry in entries if entry)
    return [(key, value) for key, _, value in pairs]
