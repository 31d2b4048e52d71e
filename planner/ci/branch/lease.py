"""One run per issue at a time, checked by planner itself: a lease ref on the forge (issue 15).

The lease is the ref `refs/planner/issues/<N>` in the repository (not a branch: it starts no
pipeline and never shows in the issue's branch or pull request). Its commit message says
whether it is held, by which run and until when; its tree holds the issue's history file as the
holder left it. Every change is a new root commit pushed with `--force-with-lease` naming the
commit last seen, so the forge's receive-pack applies it only if the ref still points there
(compare-and-swap), and the ref never grows a chain of old commits. A run:

1. takes the lease when it is absent, free or expired (its holder died: the tracking comment
   says so), else waits for it, polling, at most `wait` seconds, and stops waiting when the
   job is cancelled;
2. renews it every third of `forge.lease_seconds` while it lives (`Heartbeat`), so a run that
   died is known within `forge.lease_seconds` (default 90 s);
3. restores the history from the lease when that copy has more entries than the cache's or
   artifact's (runs in a row on one issue then never miss each other's entries), and the
   issue's payloads (planner.storage.payloads) the runner lacks;
4. frees it at the end with the history it wrote and the issue's payloads, so the next run
   starts from them.

An expiry that is not a number, not finite, or further ahead than any run writes one counts as
invalid: such a lease is taken over at once, never waited for forever. `planner lease release`
frees the lease of a run that is gone by hand.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from planner.ci.branch.gitops import GitError, GitWorkspace, Identity
from planner.storage.files import history_weight
from planner.storage.payloads import PAYLOADS_DIR, payload_folder
from planner.tools.sandbox.safe_env import git_argv

log = logging.getLogger(__name__)

LEASE_PREFIX = "refs/planner/issues/"
SEEN_REF = "refs/planner/lease-seen"
POLL_SECONDS = 2.0
CLOCK_SKEW = 60.0
"""Runners' clocks may disagree by this much; a later expiry than any run writes is invalid."""
MISSING = "couldn't find remote ref"
FREE = "planner lease\n\nstate: free\nholder: -\nexpires: 0\n"


class LeaseBusy(GitError):
    """Another run held the issue's lease for longer than this run could wait."""


@dataclass(frozen=True)
class LeaseState:
    sha: str
    held: bool
    holder: str
    expires: float
    """NaN when the lease's expiry is not a finite number."""

    @classmethod
    def parse(cls, sha: str, message: str) -> LeaseState:
        fields = dict(line.split(": ", 1) for line in message.splitlines() if ": " in line)
        return cls(
            sha,
            fields.get("state") == "held",
            fields.get("holder", "?"),
            _expiry(fields.get("expires", "")),
        )


def _expiry(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        return math.nan
    return value if math.isfinite(value) else math.nan


@dataclass
class Lease:
    ref: str
    sha: str
    run_id: str
    taken_over: LeaseState | None = None
    """The lease of a run that died (expired, or with an invalid expiry) this run took over."""
    lost: bool = False
    """Another run took the lease over while this one held it (its renewals failed)."""


@dataclass
class LeaseRules:
    seconds: float
    """A lease lasts this long unless renewed."""
    wait: float
    """How long to wait for a living holder."""
    identity: Identity
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    cancelled: Callable[[], str] = field(default=lambda: "")
    """Why the job must stop now (a signal), or ""."""

    def live(self, seen: LeaseState | None) -> bool:
        """Held by a run that renewed it lately (a valid expiry that is still ahead)."""
        if seen is None or not seen.held:
            return False
        now = self.clock()
        return now < seen.expires <= now + max(self.seconds, self.wait) + CLOCK_SKEW


def lease_ref(number: int) -> str:
    return f"{LEASE_PREFIX}{number}"


def acquire(git: GitWorkspace, number: int, run_id: str, rules: LeaseRules) -> Lease | None:
    """Take the issue's lease, waiting for a live holder; None without a remote."""
    if git.remote is None:
        return None
    ref, until = lease_ref(number), rules.clock() + rules.wait
    while True:
        seen = fetch_lease(git, ref)
        if not rules.live(seen):
            lease = _take(git, ref, run_id, seen, rules)
            if lease is not None:
                return lease
            continue  # another run was faster: look again
        assert seen is not None
        _stop_waiting_if_due(seen, until, rules)
        log.info("waiting for run %s, which works on this issue", seen.holder)
        rules.sleep(min(POLL_SECONDS, max(until - rules.clock(), 0.1)))


def _stop_waiting_if_due(seen: LeaseState, until: float, rules: LeaseRules) -> None:
    holder = f"run {seen.holder} still works on this issue"
    cancelled = rules.cancelled()
    if cancelled:
        raise LeaseBusy(f"{holder} and this run was {cancelled} while it waited for it.")
    if rules.clock() >= until:
        raise LeaseBusy(
            f"{holder} (its lease lasts until "
            f"{time.strftime('%H:%M:%S UTC', time.gmtime(seen.expires))} unless it renews it); "
            "this run waited as long as it could. Comment again to continue."
        )


def _take(
    git: GitWorkspace, ref: str, run_id: str, seen: LeaseState | None, rules: LeaseRules
) -> Lease | None:
    sha = _commit(git, seen, _held(run_id, rules), rules.identity)
    if not _push(git, sha, ref, seen.sha if seen else ""):
        return None
    dead = seen if seen is not None and seen.held else None
    if dead is not None:
        log.warning("the lease of run %s had expired (that run died): taken over", dead.holder)
    return Lease(ref, sha, run_id, dead)


def _held(run_id: str, rules: LeaseRules) -> str:
    expires = rules.clock() + rules.seconds
    return f"planner lease\n\nstate: held\nholder: {run_id}\nexpires: {expires:.0f}\n"


def renew(git: GitWorkspace, lease: Lease, rules: LeaseRules) -> bool:
    """Push the lease again with a later expiry; False when another run took it over."""
    sha = _commit_tree(git, f"{lease.sha}^{{tree}}", _held(lease.run_id, rules), rules.identity)
    if not _push(git, sha, lease.ref, lease.sha):
        lease.lost = True
        return False
    lease.sha = sha
    return True


class Heartbeat:
    """Renews the lease every third of its lifetime while the run lives (a daemon thread:
    a killed run stops renewing, and its lease expires within `rules.seconds`)."""

    def __init__(
        self, git: GitWorkspace, lease: Lease, rules: LeaseRules, on_lost: Callable[[], None]
    ) -> None:
        self.git, self.lease, self.rules, self.on_lost = git, lease, rules, on_lost
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, name="planner-lease", daemon=True)

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()

    def _beat(self) -> None:
        while not self.stopped.wait(self.rules.seconds / 3):
            try:
                if not renew(self.git, self.lease, self.rules):
                    log.warning("another run took this run's lease over: stopping")
                    self.on_lost()
                    return
            except GitError as exc:  # the forge is unreachable now: try again next beat
                log.warning("could not renew the issue's lease: %s", exc)


def restore_history(git: GitWorkspace, lease: Lease | None, target: Path) -> bool:
    """Copy the lease's history file over `target` when it has more entries. True if copied."""
    if lease is None:
        return False
    _restore_payloads(git, lease, target)
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
    tree = _tree_with(git, lease.sha, history)
    sha = _commit_tree(git, tree, FREE, identity)
    if not _push(git, sha, lease.ref, lease.sha):
        log.warning("could not free the lease %s: another run took it over", lease.ref)


def release_abandoned(git: GitWorkspace, number: int, identity: Identity) -> LeaseState | None:
    """Free the issue's lease whoever holds it, keeping the history in it (a person's command
    for a holder that is gone). The lease as it was, or None when it was not held."""
    ref = lease_ref(number)
    seen = fetch_lease(git, ref)
    if seen is None or not seen.held:
        return None
    sha = _commit_tree(git, f"{seen.sha}^{{tree}}", FREE, identity)
    if not _push(git, sha, ref, seen.sha):
        raise LeaseBusy(f"the lease {ref} changed meanwhile: look again")
    return seen


# -- git plumbing ----------------------------------------------------------------------------


def _blob(git: GitWorkspace, spec: str) -> bytes:
    """The bytes of a blob (history may hold a cut-off line: no decoding here)."""
    done = subprocess.run(
        git_argv("cat-file", "blob", spec, repository=git.root),
        cwd=git.root,
        env=git.base_env,
        capture_output=True,
    )
    return done.stdout if done.returncode == 0 else b""


def fetch_lease(git: GitWorkspace, ref: str) -> LeaseState | None:
    """The lease as the forge has it now; None when the ref does not exist."""
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
    return _commit_tree(git, tree, message, who)


def _commit_tree(git: GitWorkspace, tree: str, message: str, who: Identity) -> str:
    """A root commit: the ref holds one commit, never the chain of every change before."""
    return git._git("commit-tree", tree, "-F", "-", stdin=message, identity=who).stdout.strip()


def _empty_tree(git: GitWorkspace) -> str:
    return git._git("mktree", stdin="").stdout.strip()


def _tree_with(git: GitWorkspace, commit: str, history: Path) -> str:
    if not history.is_file():
        return f"{commit}^{{tree}}"
    blob = git._git("hash-object", "-w", "--no-filters", str(history)).stdout.strip()
    listing = f"100644 blob {blob}\t{history.name}\n"
    payloads = _payload_tree(git, payload_folder(history))
    if payloads:
        listing += f"040000 tree {payloads}\t{PAYLOADS_DIR}\n"
    return git._git("mktree", stdin=listing).stdout.strip()


def _payload_tree(git: GitWorkspace, folder: Path) -> str:
    """The issue's payloads (planner.storage.payloads) as a tree; '' when it has none."""
    files = sorted(p for p in folder.glob("*.jsonl") if p.is_file() and not p.is_symlink())
    if not files:
        return ""
    listing = ""
    for path in files:
        blob = git._git("hash-object", "-w", "--no-filters", str(path)).stdout.strip()
        listing += f"100644 blob {blob}\t{path.name}\n"
    return git._git("mktree", stdin=listing).stdout.strip()


def _restore_payloads(git: GitWorkspace, lease: Lease, target: Path) -> None:
    """The lease's payloads that this runner's history lacks (each is checked against its
    hash when it is read, so a copy from anywhere is as good as another)."""
    listed = git._git("ls-tree", "--name-only", lease.sha, f"{PAYLOADS_DIR}/", check=False)
    folder = payload_folder(target)
    for name in listed.stdout.split():
        file = PurePosixPath(name).name
        if not file.endswith(".jsonl") or (folder / file).exists():
            continue
        folder.mkdir(parents=True, exist_ok=True)
        staged = folder / f".{file}.lease"
        staged.write_bytes(_blob(git, f"{lease.sha}:{PAYLOADS_DIR}/{file}"))
        os.replace(staged, folder / file)


def _push(git: GitWorkspace, sha: str, ref: str, expected: str) -> bool:
    """Applied only if the ref is still at `expected` ("": still absent): compare-and-swap."""
    assert git.remote is not None
    argv = (
        "push",
        "--porcelain",
        "--no-verify",
        f"--force-with-lease={ref}:{expected}",
        git.remote.url,
        f"{sha}:{ref}",
    )
    done: subprocess.CompletedProcess[str] = git._git(*argv, network=True, check=False)
    if done.returncode == 0:
        return True
    if "[rejected]" in done.stdout or "stale info" in done.stdout or "fetch first" in done.stdout:
        return False
    raise git._failure(("push", ref), done)
