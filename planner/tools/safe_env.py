"""What the programs planner starts may see and run: never its secrets, git never repository code.

Programs get an allow-listed environment (scrubbed_environment): a variable reaches them only
when it is on ALLOWED_VARIABLES or the user named it in `tools.env_passthrough`, and never when it
is named like a credential (is_secret_name). A deny-list alone misses what no rule foresaw, such
as GitLab's CI_REPOSITORY_URL, which carries the job token in its userinfo. git also runs with
options that switch off what a repository can make it execute: a pass may plant hooks or an
fsmonitor in `.git/` (through an allowed command or an MCP server), and `commit --no-verify`
would still run post-commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from planner.engine.redaction import is_secret_name

__all__ = ["git_argv", "git_environment", "is_secret_name", "scrubbed_environment"]

URL_WITH_PASSWORD = re.compile(r"://[^/\s@:]*:[^/\s@]+@")

GIT_SAFETY = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
)
"""Passed as `-c` to every git command: no hooks, no fsmonitor, no `ext::` transport."""
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


def git_argv(*args: str, config: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """`git <args>` with GIT_SAFETY and `config` as `-c` options (never put secrets in them)."""
    options = [part for key, value in (*GIT_SAFETY, *config) for part in ("-c", f"{key}={value}")]
    return ["git", *options, *args]
