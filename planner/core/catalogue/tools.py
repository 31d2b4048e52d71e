"""The messages of the tools (planner/tools/): the tools' user and its sandbox, MCP servers,
the tool registry."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

TOOLS: tuple[Entry, ...] = (
    Entry(
        "PLN065",
        "could not give {} back to uid {}: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN181",
        "drop_privileges.py: the user did not change",
        "the-tools-user",
    ),
    Entry(
        "PLN182",
        "drop_privileges.py: {}: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN183",
        "usage: drop_privileges.py UID GID [--reach WORKSPACE] -- PROGRAM [ARGS...]",
        "the-tools-user",
    ),
    Entry(
        "PLN184",
        "drop_privileges.py: every directory above {} is open already",
        "the-tools-user",
    ),
    Entry(
        "PLN185",
        "drop_privileges.py: {} failed: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN186",
        "{} holds more than {} entries: left open to the tools' user, who can write {}, which "
        "planner's own git reads: give {} back to root (chown root {})",
        "the-tools-user",
    ),
    Entry(
        "PLN187",
        "could not close {} to the tools' user: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN188",
        "tools run as uid {} in {}, but a parent directory of it is closed to that user (no "
        "o+x) and it could not be mounted back in reach ({}): tools start inside it, yet "
        "programs that look it up by its full path (git, python, pytest) fail with 'Permission "
        "denied'. Make every parent directory searchable (chmod o+x), check out elsewhere, or "
        "give planner CAP_SYS_ADMIN. tools.sandbox_user: off runs tools as root, where they can "
        "read the CI job's environment.",
        "the-tools-user",
    ),
    Entry(
        "PLN189",
        "processes of uid {} that the tools started still run after the tools were closed: {}; "
        "a change they make before the commit is not judged",
        "the-tools-user",
    ),
    Entry(
        "PLN190",
        "processes of uid {} did not stop: {}",
        "the-tools-user",
    ),
    Entry(
        "PLN191",
        "{} was replaced while tools ran; it is left as it is",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN192",
        "MCP tool {} of {} clashes after renaming; skipped",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN193",
        "MCP server {} {}; its tools are left out",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN194",
        "MCP servers did not shut down within 30s; cancelling them",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN195",
        "MCP server configuration: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN196",
        "tools.mcp_config_file {} cannot be read: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN197",
        "tools.mcp_config_file {} is not valid JSON: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN198",
        "tools.mcp_config_file {} must hold an object with 'mcpServers'",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN199",
        "tools.mcp_config_file {}: {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN200",
        "tool {} is offered twice; the first one is kept",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN201",
        "tool {} crashed",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN202",
        "closing a tool provider failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN203",
        "tool cleanup failed",
        "when-the-log-says-a-run-failed",
    ),
    Entry(
        "PLN218",
        "MCP server {} {}; its tools are left out --- its stderr (last {} bytes) --- {}",
        "warnings-in-the-log",
    ),
)
