"""One run per issue at a time, checked by planner itself: a lease ref on the forge (issue 15).

The lease is the ref `refs/planner/issues/<N>` in the repository (not a branch: it starts no
pipeline and never shows in the issue's branch or pull request). Its commit message says
whether it is held, by which run and until when; its tree holds the issue's history file as the
holder left it. Every change is a plain push of a child of the commit last seen, so the forge's
receive-pack applies it only if the ref still points where we saw it (compare-and-swap; never a
force push). A run:

1. takes the lease when it is absent, free or expired (its holder died: the tracking comment
   says so), else waits for it, polling, at most `wait` seconds;
2. restores the history from the lease when that copy has more entries than the cache's or
   artifact's (runs in a row on one issue then never miss each other's entries);
3. frees it at the end with the history it wrote, so the next run starts from it.

A killed run's lease expires after `forge.lease_seconds` (default: the wall-clock budget plus a
minute), and the next run takes it over.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from planner.ci.gitops import GitError, GitWorkspace, Identity
from planner.storage.files import history_weight
from planner.tools.safe_env import git_argv

log = logging.getLogger(__name__)

LEASE_PREFIX = "refs/planner/issues/"
SEEN_REF = "refs/planner/lease-seen"
POLL_SECONDS = 2.0
MISSING = "couldn't find remote ref"


class LeaseBusy(GitError):
    """Another run held the issue's lease for longer than this run could wait."""


@dataclass(frozen=True)
class LeaseState:
    sha: str
    held: bool
    holder: str
    expires: float

    @classmethod
    def parse(cls, sha: str, message: str) -> LeaseState:
        fields = dict(line.split(": ", 1) for line in message.splitlines() if ": " in line)
        try:
            expires = float(fields.get("expires", "0"))
        except ValueError:
            expires = 0.0  # an unreadable lease counts as expired
        return cls(sha, fields.get("state") == "held", fields.get("holder", "?"), expires)


@dataclass
class Lease:
    ref: str
    sha: str
    run_id: str
    taken_over: LeaseState | None = None
    """The expired lease of a run that died, when this run took it over."""


@dataclass
class LeaseRules:
    seconds: float
    wait: float
    identity: Identity
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep


def lease_ref(number: int) -> str:
    return f"{LEASE_PREFIX}{number}"


def acquire(git: GitWorkspace, number: int, run_id: str, rules: LeaseRules) -> Lease | None:
    """Take the issue's lease, waiting for a live holder; None without a remote."""
    if git.remote is None:
        return None
    ref, until = lease_ref(number), rules.clock() + rules.wait
    while True:
        seen = _fetch(git, ref)
        if seen is None or not seen.held or seen.expires <= rules.clock():
            lease = _take(git, ref, run_id, seen, rules)
            if lease is not None:
                return lease
            continue  # another run was faster: look again
        if rules.clock() >= until:
            raise LeaseBusy(
                f"run {seen.holder} still works on this issue (its lease lasts until "
                f"{time.strftime('%H:%M:%S UTC', time.gmtime(seen.expires))}); "
                "this run waited as long as it could. Comment again to continue."
            )
        log.info("waiting for run %s, which works on this issue", seen.holder)
        rules.sleep(min(POLL_SECONDS, max(until - rules.clock(), 0.1)))


def _take(
    git: GitWorkspace, ref: str, run_id: str, seen: LeaseState | None, rules: LeaseRules
) -> Lease | None:
    expires = rules.clock() + rules.seconds
    message = f"planner lease\n\nstate: held\nholder: {run_id}\nexpires: {expires:.0f}\n"
    sha = _commit(git, seen, message, rules.identity)
    if not _push(git, sha, ref):
        return None
    expired = seen if seen is not None and seen.held else None
    if expired is not None:
        log.warning("the lease of run %s had expired (that run died): taken over", expired.holder)
    return Lease(ref, sha, run_id, expired)


def restore_history(git: GitWorkspace, lease: Lease | None, target: Path) -> bool:
    """Copy the lease's history file over `target` when it has more entries. True if copied."""
    if lease is None:
        return False
    listed = git._git("ls-tree", "--name-only", lease.sha, check=False).stdout.split()
    if target.name not in listed:
        return False
    staged = target.with_name(target.name + ".lease")
    target.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(_blob(git, f"{lease.sha}:{target.name}"))
    if target.exists() and history_weight(target) >= history_weight(staged):
        staged.unlink()
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(staged, target)  # a rename: the copy in place is never half written
    log.info("history restored from the issue's lease ref")
    return True


def release(git: GitWorkspace, lease: Lease | None, history: Path, identity: Identity) -> None:
    """Free the lease, leaving the history this run wrote in it for the next run."""
    if lease is None:
        return
    message = "planner lease\n\nstate: free\nholder: -\nexpires: 0\n"
    tree = _tree_with(git, lease.sha, history)
    sha = _commit_tree(git, tree, lease.sha, message, identity)
    if not _push(git, sha, lease.ref):
        log.warning("could not free the lease %s: another run took it over", lease.ref)


# -- git plumbing ----------------------------------------------------------------------------


def _blob(git: GitWorkspace, spec: str) -> bytes:
    """The bytes of a blob (history may hold a cut-off line: no decoding here)."""
    done = subprocess.run(
        git_argv("cat-file", "blob", spec), cwd=git.root, env=git.base_env, capture_output=True
    )
    return done.stdout if done.returncode == 0 else b""


def _fetch(git: GitWorkspace, ref: str) -> LeaseState | None:
    assert git.remote is not None
    done = git._git(
        "fetch", "-q", "--no-tags", git.remote.url, f"+{ref}:{SEEN_REF}", network=True, check=False
    )
    if done.returncode != 0:
        if MISSING in done.stderr:
            return None
        raise git._failure(("fetch", ref), done)
    sha = git._git("rev-parse", SEEN_REF).stdout.strip()
    return LeaseState.parse(sha, git._git("log", "-1", "--format=%B", sha).stdout)


def _commit(git: GitWorkspace, seen: LeaseState | None, message: str, who: Identity) -> str:
    tree = f"{seen.sha}^{{tree}}" if seen else _empty_tree(git)
    return _commit_tree(git, tree, seen.sha if seen else None, message, who)


def _commit_tree(
    git: GitWorkspace, tree: str, parent: str | None, message: str, who: Identity
) -> str:
    parents = ("-p", parent) if parent else ()
    done = git._git("commit-tree", tree, *parents, "-F", "-", stdin=message, identity=who)
    return done.stdout.strip()


def _empty_tree(git: GitWorkspace) -> str:
    return git._git("mktree", stdin="").stdout.strip()


def _tree_with(git: GitWorkspace, commit: str, history: Path) -> str:
    if not history.is_file():
        return f"{commit}^{{tree}}"
    blob = git._git("hash-object", "-w", "--no-filters", str(history)).stdout.strip()
    return git._git("mktree", stdin=f"100644 blob {blob}\t{history.name}\n").stdout.strip()


def _push(git: GitWorkspace, sha: str, ref: str) -> bool:
    """A plain push: applied only if the ref is still where we saw it (or still absent)."""
    assert git.remote is not None
    argv = ("push", "--porcelain", "--no-verify", git.remote.url, f"{sha}:{ref}")
    done: subprocess.CompletedProcess[str] = git._git(*argv, network=True, check=False)
    if done.returncode == 0:
        return True
    if "[rejected]" in done.stdout or "stale info" in done.stdout or "fetch first" in done.stdout:
        return False
    raise git._failure(("push", ref), done)
