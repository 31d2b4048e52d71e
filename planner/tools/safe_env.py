"""What the programs planner starts may see and run: never its secrets, git never repository code.

One rule decides which environment variables are secrets (is_secret_name); run_command and every
git command planner runs get the environment without them. git also runs with options that
switch off what a repository can make it execute: a pass may plant hooks or an fsmonitor in
`.git/` (through an allowed command or an MCP server), and `commit --no-verify` would still run
post-commit.
"""

from __future__ import annotations

from collections.abc import Mapping

SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "JWT")
SECRET_PREFIXES = ("GITHUB_", "GITLAB_", "CI_JOB_", "OPENAI_", "ACTIONS_", "INPUT_")
"""INPUT_ holds a GitHub Action's inputs, which include the tokens planner was given."""

GIT_SAFETY = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
)
"""Passed as `-c` to every git command: no hooks, no fsmonitor, no `ext::` transport."""
INHERITED_GIT_CONFIG = ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")
"""Config given to git through the environment; dropped, so only planner's own applies."""


def is_secret_name(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS) or upper.startswith(SECRET_PREFIXES)


def scrubbed_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without anything named like a token, key, password or CI credential."""
    return {name: value for name, value in env.items() if not is_secret_name(name)}


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
