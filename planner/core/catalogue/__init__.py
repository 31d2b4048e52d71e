"""Every message planner shows a user, with its code: what it logs at warning level or above,
raises as an error, stops a pass with, posts as a reply, exits with or prints to standard error.

Each entry is the message exactly as the code writes it, with {} for each part filled in at run
time (an f-string's placeholder, a `%s` of a log call). tests/test_catalogue.py reads the source
with `ast` and fails for a message that is not here, word for word, and for an entry no code
makes any more: a new or changed message gets its entry (the next free code; a code is never
reused) and its fix in docs/troubleshooting.md, whose section `fix` names. docs/messages.md lists
them all (`python3 scripts/dev.py docs`).

The entries live by the area whose code makes the message (ci.py, commands.py, passes.py,
phases.py, tools.py, storage.py); CATALOGUE holds them all, in the order of their codes.
"""

from planner.core.catalogue.ci import CI
from planner.core.catalogue.commands import COMMANDS
from planner.core.catalogue.entry import Entry
from planner.core.catalogue.passes import PASSES
from planner.core.catalogue.phases import PHASES
from planner.core.catalogue.storage import STORAGE
from planner.core.catalogue.tools import TOOLS

CATALOGUE: tuple[Entry, ...] = tuple(
    sorted((*CI, *COMMANDS, *PASSES, *PHASES, *TOOLS, *STORAGE), key=lambda entry: entry.code)
)
"""Every message by code."""

__all__ = ["CATALOGUE", "Entry"]
