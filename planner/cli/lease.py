"""`planner lease release --issue N`: free the issue's lease when the run that held it is gone.

A run that died leaves its lease held; the lease expires by itself within `forge.lease_seconds`
(90 s by default), so this command is for a lease that will not expire (one written with a
broken clock) or for a person who cannot wait. It keeps the history in the lease and refuses a
lease that was renewed lately (its holder may be alive) unless --force is given.
"""

from __future__ import annotations

import argparse
import subprocess
import time
from pathlib import Path
from typing import Any

from planner.ci.branch.gitops import LOCAL_CONFIG, GitWorkspace, Identity
from planner.ci.branch.lease import (
    CLOCK_SKEW,
    LeaseState,
    fetch_lease,
    lease_ref,
    release_abandoned,
)
from planner.ci.forges.base import GitRemote
from planner.core.errors import UserInputError

IDENTITY = Identity("planner", "planner@localhost")


class PersonsGit(GitWorkspace):
    """git as the person who runs the command uses it: their credential helpers and ssh."""

    def _config(self, network: bool) -> tuple[tuple[str, str], ...]:
        return LOCAL_CONFIG


def add_lease_command(commands: Any) -> None:
    lease = commands.add_parser("lease", help="free an issue's lease whose run is gone")
    actions = lease.add_subparsers(required=True, metavar="ACTION")
    release = actions.add_parser("release", help="free the lease of issue N")
    release.add_argument("--issue", type=int, required=True, help="issue number")
    release.add_argument("--repo", type=Path, default=Path("."), help="repository working tree")
    release.add_argument("--remote", default="origin", help="remote name or URL (origin)")
    release.add_argument(
        "--force", action="store_true", help="free it even if it was renewed lately"
    )
    release.set_defaults(handler=run_release)


def run_release(args: argparse.Namespace) -> int:
    git = PersonsGit(args.repo, GitRemote(remote_url(args.repo, args.remote)))
    seen = fetch_lease(git, lease_ref(args.issue))
    if seen is None or not seen.held:
        print(f"The lease of issue {args.issue} is not held: nothing to release.")
        return 0
    if renewed_lately(seen) and not args.force:
        raise UserInputError(
            f"run {seen.holder} renewed the lease of issue {args.issue} lately (until "
            f"{time.strftime('%H:%M:%S UTC', time.gmtime(seen.expires))}), so it may still "
            "be working; wait for that time, or give --force if you know it is gone"
        )
    freed = release_abandoned(git, args.issue, IDENTITY)
    holder = freed.holder if freed else seen.holder
    print(f"Released the lease of issue {args.issue} (held by run {holder}).")
    return 0


def renewed_lately(seen: LeaseState) -> bool:
    """A valid expiry still ahead: a living run renews its lease before it expires."""
    now = time.time()
    return now < seen.expires <= now + 3600 + CLOCK_SKEW


def remote_url(repo: Path, remote: str) -> str:
    if "/" in remote or ":" in remote:
        return remote
    done = subprocess.run(
        ["git", "remote", "get-url", remote], cwd=repo, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise UserInputError(f"{repo} has no git remote {remote!r}: {done.stderr.strip()}")
    return done.stdout.strip()
