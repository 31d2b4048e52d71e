"""The issue branch in the working tree: prepare it, commit the pass's changes, push it.

The token travels only as an HTTP header given to git through GIT_CONFIG_* environment
variables (`http.<url>.extraheader`): never in a URL, a remote, argv or a log line. The header
is scoped to the exact repository URL and resets any header configured before (for example
the one actions/checkout persisted), so exactly one Authorization header is sent, and it is in
the environment of fetch and push only.

Every git command runs with an environment scrubbed of planner's secrets and with the fixed safe
configuration of planner.tools.sandbox.safe_env, whatever the repository's config says: no hooks, no
fsmonitor, no drivers but git-lfs's, no proxy but planner's own, TLS verification on. fetch and
push also speak only the remote's protocol (so a `url.*.insteadOf` in the repository's config
cannot send them to a local path or over ssh).

Before every push (and before a rebase that would rewrite them) the commits about to leave are
checked (verify_outgoing): HEAD is the issue branch, every commit the remote does not have is one
this GitWorkspace made, and their whole change passes the commit rules — not only what was
staged. A program a pass started cannot get a commit of its own pushed, however it made it.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from planner.ci.branch.commit_policy import (
    CommitRules,
    Refusal,
    enforce_commit_policy,
    range_refusals,
)
from planner.ci.forges.base import GitRemote, redact_secrets
from planner.core.errors import PlannerError
from planner.tools.sandbox.safe_env import git_argv, git_environment

log = logging.getLogger(__name__)

BASE_REF = "refs/planner/base"
BRANCH_REF = "refs/planner/branch"
MISSING_REF = "couldn't find remote ref"
LOCAL_CONFIG = (("commit.gpgsign", "false"), ("maintenance.auto", "false"), ("gc.auto", "0"))
"""No signing program, and no background gc left running after a command."""
NETWORK_CONFIG = (
    ("protocol.allow", "never"),  # the remote's own scheme is allowed again; ssh never is
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
)


class GitError(PlannerError):
    """A git command failed; the message says which and why (never with credentials)."""


class OutgoingRefused(GitError):
    """What would be pushed is not what planner made: nothing was pushed."""


@dataclass(frozen=True)
class Identity:
    name: str
    email: str


@dataclass(frozen=True)
class BranchState:
    branch: str
    base: str
    base_sha: str
    created: bool
    """True when the branch did not exist yet and was started from the base branch."""


class GitWorkspace:
    def __init__(
        self, root: Path, remote: GitRemote | None, *, env: Mapping[str, str] | None = None
    ) -> None:
        self.root = root
        self.remote = remote
        self.base_env = git_environment(os.environ if env is None else env)
        self.state: BranchState | None = None
        self.commit_rules = CommitRules()
        self.made: set[str] = set()
        """Commits this GitWorkspace made (its own commits and their rebased copies)."""
        self.published = ""
        """The commit the remote branch pointed to when planner last fetched it (the base's when
        the branch is new): what the remote already has, kept in memory, never read from a ref
        a pass's programs could move."""
        self.refused: list[Refusal] = []
        """Staged paths the last commit_all() left out (planner.ci.branch.commit_policy)."""

    # -- the three steps -------------------------------------------------------------------------

    def prepare(self, branch: str, base: str) -> BranchState:
        """Check out `branch`: the remote one when it exists, else a new one from `base`."""
        if branch == base:
            raise GitError(f"the issue branch may not be the default branch {base!r}")
        self._require_clean()
        if self.remote is None:
            self.state = self._prepare_local(branch, base)
        else:
            self.state = self._prepare_remote(branch, base)
        log.info("on branch %s (%s)", branch, "new" if self.state.created else "continued")
        return self.state

    def commit_all(self, message: str, identity: Identity) -> str | None:
        """Commit every change in the working tree; None when there is nothing to commit."""
        self._git("add", "-A")
        self.refused = enforce_commit_policy(self.root, self.base_env, self.commit_rules)
        if self._git("diff", "--cached", "--quiet", "--no-ext-diff", check=False).returncode == 0:
            return None
        self._git("commit", "--no-verify", "-q", "-F", "-", stdin=message, identity=identity)
        made = self.head()
        self.made.add(made)
        return made

    def push(self) -> bool:
        """Push the branch (never forced, never the base). False when there is no remote."""
        state = self._state()
        if self.remote is None:
            return False
        if state.branch == state.base:
            raise GitError(f"refusing to push to the default branch {state.base!r}")
        refspec = f"HEAD:refs/heads/{state.branch}"
        self.verify_outgoing()
        self._git("push", "--porcelain", "--no-verify", self.remote.url, refspec, network=True)
        return True

    def verify_outgoing(self) -> None:
        """Refuse (OutgoingRefused) unless HEAD is the issue branch, every commit the remote
        does not have is one this GitWorkspace made, and their whole change passes the commit
        rules: a program a pass started may have committed, detached HEAD or moved the branch."""
        state = self._state()
        head = self._git("symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
        if head != f"refs/heads/{state.branch}":
            where = f"on {head}" if head else "detached"
            raise OutgoingRefused(
                f"refusing to push: HEAD is {where}, not on the issue branch {state.branch} "
                "(a program the pass started moved it)"
            )
        outgoing = self._git("rev-list", "HEAD", "--not", self.published).stdout.split()
        foreign = [sha for sha in outgoing if sha not in self.made]
        if foreign:
            raise OutgoingRefused(
                f"refusing to push: {len(foreign)} commit(s) on {state.branch} were not made by "
                f"planner ({', '.join(sha[:12] for sha in foreign[:5])}); a program the pass "
                "started may have committed them"
            )
        refusals = range_refusals(self.root, self.base_env, self.commit_rules, self.published)
        if refusals:
            listed = "; ".join(refusal.describe() for refusal in refusals[:5])
            raise OutgoingRefused(f"refusing to push changes that break the commit rules: {listed}")

    def commits_ahead(self) -> int:
        """Commits on the branch that the base branch does not have."""
        state = self._state()
        count = self._git("rev-list", "--count", f"{state.base_sha}..HEAD").stdout.strip()
        return int(count or 0)

    def head(self) -> str:
        return self._git("rev-parse", "HEAD").stdout.strip()

    def read_at(self, commit: str, path: str) -> bytes | None:
        """The file `path` as `commit` has it; None when the commit or the file is not here."""
        if not _object_id(commit):
            return None
        done = subprocess.run(
            git_argv("show", f"{commit}:{path}", config=LOCAL_CONFIG),
            cwd=self.root,
            env=self.base_env,
            capture_output=True,
            timeout=600,
        )
        return done.stdout if done.returncode == 0 else None

    def diff_of(self, commit: str, path: str) -> str:
        """The change the branch made to `path` up to `commit` (against where it left the base
        branch); '' when git cannot tell."""
        state = self._state()
        if not _object_id(commit):
            return ""
        argv = ("diff", "--no-ext-diff", "--no-color", f"{state.base_sha}...{commit}", "--", path)
        done = self._git(*argv, check=False)
        return done.stdout if done.returncode == 0 else ""

    def changes_since(self, since: str, path: str) -> str:
        """`path`'s diff from `since` to HEAD without context lines ('' when git cannot tell)."""
        if not _object_id(since):
            return ""
        argv = ("diff", "--no-ext-diff", "--no-color", "-U0", since, "HEAD", "--", path)
        done = self._git(*argv, check=False)
        return done.stdout if done.returncode == 0 else ""

    def last_change(self, since: str, paths: list[str]) -> str:
        """The newest commit after `since` on the branch that changed one of `paths` ('' for
        none, or when `since` is not a commit of the branch)."""
        if not _object_id(since) or not paths:
            return ""
        argv = ("log", "-1", "--format=%H", f"{since}..HEAD", "--", *paths)
        done = self._git(*argv, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    # -- preparing ---------------------------------------------------------------------------------

    def _prepare_remote(self, branch: str, base: str) -> BranchState:
        assert self.remote is not None
        self._fetch(base, BASE_REF, required=True)
        exists = self._fetch(branch, BRANCH_REF, required=False)
        start = BRANCH_REF if exists else BASE_REF
        self._git("checkout", "-q", "--no-track", "-B", branch, start)
        self.published = self._sha(start)
        return BranchState(branch, base, self._sha(BASE_REF), created=not exists)

    def _prepare_local(self, branch: str, base: str) -> BranchState:
        base_sha = self._sha(f"refs/heads/{base}")
        exists = bool(self._sha(f"refs/heads/{branch}", required=False))
        if exists:
            self._git("checkout", "-q", branch)
        else:
            self._git("checkout", "-q", "-b", branch, base_sha)
        self.published = self.head()
        return BranchState(branch, base, base_sha, created=not exists)

    def _fetch(self, branch: str, into: str, *, required: bool) -> bool:
        assert self.remote is not None
        refspec = f"+refs/heads/{branch}:{into}"
        done = self._git(
            "fetch", "-q", "--no-tags", self.remote.url, refspec, network=True, check=False
        )
        if done.returncode == 0:
            return True
        if not required and MISSING_REF in done.stderr:
            return False
        raise self._failure(("fetch", refspec), done)

    def _require_clean(self) -> None:
        changed = self._git("status", "--porcelain", "--untracked-files=no").stdout.strip()
        if changed:
            raise GitError(
                "the working tree has uncommitted changes to tracked files; commit or stash "
                f"them first:\n{changed}"
            )

    def _sha(self, ref: str, *, required: bool = True) -> str:
        done = self._git("rev-parse", "--verify", "--quiet", ref, check=False)
        if done.returncode != 0 and required:
            raise GitError(f"{ref} does not exist in {self.root}")
        return done.stdout.strip()

    def _state(self) -> BranchState:
        if self.state is None:
            raise GitError("prepare() must run before committing or pushing")
        return self.state

    # -- running git -------------------------------------------------------------------------------

    def _git(
        self,
        *args: str,
        check: bool = True,
        network: bool = False,
        stdin: str | None = None,
        identity: Identity | None = None,
        config: tuple[tuple[str, str], ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        argv = git_argv(*args, config=(*self._config(network), *config), repository=self.root)
        try:
            done = subprocess.run(
                argv,
                cwd=self.root,
                env=self._environment(network, identity),
                input=stdin,
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitError(f"git {args[0]} could not run: {exc}") from None
        if check and done.returncode != 0:
            raise self._failure(args, done)
        return done

    def _config(self, network: bool) -> tuple[tuple[str, str], ...]:
        """`-c` settings (never a secret: argv is visible to every process)."""
        if not network or self.remote is None:
            return LOCAL_CONFIG
        scheme = urlsplit(self.remote.url).scheme or "file"
        return (*LOCAL_CONFIG, *NETWORK_CONFIG, (f"protocol.{scheme}.allow", "always"))

    def _environment(self, network: bool, identity: Identity | None) -> dict[str, str]:
        env = dict(self.base_env)
        if identity is not None:
            for role in ("AUTHOR", "COMMITTER"):
                env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = identity.name, identity.email
        if network and self.remote is not None and self.remote.auth_header:
            key = f"http.{self.remote.url}.extraheader"
            headers = [(key, ""), (key, self.remote.auth_header)]  # reset, then ours only
            for index, (name, value) in enumerate(headers):
                env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = name, value
            env["GIT_CONFIG_COUNT"] = str(len(headers))
        return env

    def _failure(self, args: tuple[str, ...], done: subprocess.CompletedProcess[str]) -> GitError:
        secrets = [self.remote.auth_header] if self.remote and self.remote.auth_header else []
        output = redact_secrets((done.stderr or done.stdout).strip(), secrets)[-2000:]
        hint = _hint(output)
        return GitError(
            f"git {' '.join(args[:1])} failed (exit {done.returncode}): {output}"
            + (f"\n{hint}" if hint else "")
        )


def _object_id(text: str) -> bool:
    """A commit id as forges give them (never an option or a revision expression)."""
    return bool(re.fullmatch(r"[0-9a-f]{7,64}", text))


def _hint(output: str) -> str:
    lowered = output.lower()
    if "403" in lowered or "permission" in lowered or "denied" in lowered:
        return (
            "The token may not push: on GitHub give the workflow `contents: write`; on GitLab "
            "use a project access token with `write_repository` (CI_JOB_TOKEN cannot push)."
        )
    if "authentication" in lowered or "could not read username" in lowered:
        return "The remote asked for credentials: check the token given to planner."
    if "non-fast-forward" in lowered or "fetch first" in lowered:
        return "Someone else pushed to the issue branch meanwhile; re-run planner to continue."
    return ""


# -- foreign pushes and checkpoints (issue 15) ------------------------------------------------

REJECTED = ("[rejected]", "non-fast-forward", "fetch first")
PUSH_ATTEMPTS = 3


@dataclass(frozen=True)
class Published:
    """How a push ended: `pushed`, `local` (no remote), or `conflict` (on `side_branch`)."""

    how: str
    side_branch: str = ""
    rebased: bool = False


def publish(git: GitWorkspace, identity: Identity, side_branch: str) -> Published:
    """Push the branch; a person's commits pushed meanwhile are fetched and ours rebased onto
    them, so theirs stay ancestors. A real conflict puts our commits on `side_branch` instead.
    Never forced, never a dropped commit."""
    state = git._state()
    if git.remote is None:
        return Published("local")
    rebased = False
    for _ in range(PUSH_ATTEMPTS):
        done = _push_ref(git, f"refs/heads/{state.branch}")
        if done.returncode == 0:
            return Published("pushed", rebased=rebased)
        if not any(mark in done.stdout + done.stderr for mark in REJECTED):
            raise git._failure(("push",), done)
        git._fetch(state.branch, BRANCH_REF, required=True)
        if not rebase_onto(git, BRANCH_REF, identity):
            return _to_side_branch(git, side_branch)
        rebased = True
    raise GitError(f"{state.branch} kept moving during {PUSH_ATTEMPTS} push attempts")


def _push_ref(git: GitWorkspace, ref: str) -> subprocess.CompletedProcess[str]:
    assert git.remote is not None
    git.verify_outgoing()
    argv = ("push", "--porcelain", "--no-verify", git.remote.url, f"HEAD:{ref}")
    return git._git(*argv, network=True, check=False)


def rebase_onto(git: GitWorkspace, upstream: str, identity: Identity) -> bool:
    """Replay our commits onto `upstream`; False (and nothing changed) on a conflict.
    Commits that became empty are kept, so none of ours disappears. Only planner's own commits
    are replayed: verify_outgoing first, so a rebase never turns a commit a program made into
    one planner made."""
    git.verify_outgoing()
    argv = ("rebase", "-q", "--reapply-cherry-picks", "--empty=keep", upstream)
    done = git._git(*argv, check=False, identity=identity)
    if done.returncode == 0:
        onto = git._sha(upstream)
        git.made.update(git._git("rev-list", "HEAD", "--not", onto).stdout.split())
        git.published = onto
        return True
    log.warning("rebasing onto the remote branch conflicted: %s", done.stdout + done.stderr)
    git._git("rebase", "--abort", check=False)
    return False


def _to_side_branch(git: GitWorkspace, side_branch: str) -> Published:
    done = _push_ref(git, f"refs/heads/{side_branch}")
    if done.returncode != 0:
        raise git._failure(("push",), done)
    return Published("conflict", side_branch=side_branch)


def on_branch(git: GitWorkspace, commit: str, marker: str) -> bool:
    """Whether HEAD (the fetched branch) carries `commit`, or a rebased copy of it (`marker`)."""
    if (
        commit
        and git._git("merge-base", "--is-ancestor", commit, "HEAD", check=False).returncode == 0
    ):
        return True
    return bool(marker) and marker in checkpoint_markers(git)


def checkpoint_markers(git: GitWorkspace) -> set[str]:
    state = git._state()
    key = "Planner-Checkpoint"
    fmt = f"--format=%(trailers:key={key},valueonly,separator=%x00)"
    out = git._git("log", fmt, f"{state.base_sha}..HEAD", check=False).stdout
    return {value.strip() for value in out.replace("\0", "\n").splitlines() if value.strip()}


def marked_commits(git: GitWorkspace) -> dict[str, str]:
    """Checkpoint marker -> the commit on the branch that carries it now (a rebase gives a
    commit a new id; its trailer stays)."""
    state = git._state()
    fmt = "--format=%H%x01%(trailers:key=Planner-Checkpoint,valueonly,separator=%x02)%x03"
    out = git._git("log", fmt, f"{state.base_sha}..HEAD", check=False).stdout
    found: dict[str, str] = {}
    for record in out.split("\x03"):
        sha, _, markers = record.strip().partition("\x01")
        for marker in markers.split("\x02"):
            if sha and marker.strip():
                found.setdefault(marker.strip(), sha)
    return found
