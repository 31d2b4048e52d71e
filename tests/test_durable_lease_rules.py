"""The issue's lease against a real bare repository: a dead holder is known within the lease's
short lifetime, a living one keeps it by renewing it, an expiry that is not a sane number is
never waited for, the ref holds one commit however often it changed, and a person can free a
lease whose run is gone (`planner lease release`)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.ci.branch.lease import (
    Heartbeat,
    LeaseBusy,
    LeaseRules,
    acquire,
    fetch_lease,
    lease_ref,
    release,
)
from planner.ci.forges.base import GitRemote
from planner.cli.main import main
from tests.fake_forge.core import IDENTITY, git

WHO = Identity("planner", "planner@example.invalid")
REF = lease_ref(1)


class NoWaiting(Exception):
    pass


def never_sleep(seconds: float) -> None:
    raise NoWaiting(f"waited {seconds} s for a lease that should have been taken over")


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    bare = tmp_path / "forge.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    return bare


def workspace(bare: Path, name: str) -> GitWorkspace:
    root = bare.parent / name
    git(bare.parent, "init", "-q", str(root))
    return GitWorkspace(root, GitRemote(str(bare)))


def rules(seconds: float = 90, wait: float = 1860, **kwargs: object) -> LeaseRules:
    return LeaseRules(seconds=seconds, wait=wait, identity=WHO, **kwargs)  # type: ignore[arg-type]


def hold(bare: Path, holder: str, expires: str) -> str:
    """The lease as another run (or a broken one) left it."""
    tree = git(bare, "hash-object", "-t", "tree", "-w", "/dev/null")
    message = f"planner lease\n\nstate: held\nholder: {holder}\nexpires: {expires}\n"
    sha = git(bare, "commit-tree", tree, "-m", message, env=IDENTITY)
    git(bare, "update-ref", REF, sha)
    return sha


@pytest.mark.parametrize("expires", ["nan", "inf", "-inf", "1e400", "tomorrow", "", "99999999999"])
def test_a_lease_whose_expiry_is_not_a_sane_time_is_taken_over_at_once(
    bare: Path, expires: str
) -> None:
    """Attack on availability: a lease written with `expires: nan`, `inf` or a date decades
    ahead must not make every later event wait (or crash); it is taken over without waiting."""
    hold(bare, "run-broken", expires)

    lease = acquire(workspace(bare, "ws"), 1, "run-next", rules(sleep=never_sleep))

    assert lease is not None and lease.taken_over is not None
    assert lease.taken_over.holder == "run-broken"
    assert fetch_lease(workspace(bare, "look"), REF).holder == "run-next"  # type: ignore[union-attr]


def test_a_living_holder_renews_its_short_lease_and_a_dead_one_loses_it_within_its_lifetime(
    bare: Path,
) -> None:
    first = workspace(bare, "first")
    lease = acquire(first, 1, "run-alive", rules(seconds=1.5))
    assert lease is not None
    with Heartbeat(first, lease, rules(seconds=1.5), on_lost=lambda: None):
        time.sleep(3.5)  # more than twice the lease's lifetime: only renewals keep it
        with pytest.raises(LeaseBusy, match="run run-alive still works on this issue"):
            acquire(workspace(bare, "second"), 1, "run-waiting", rules(seconds=1.5, wait=0))
    died_at = time.time()  # the heartbeat stops as a killed run's would

    waited = acquire(workspace(bare, "third"), 1, "run-next", rules(seconds=1.5, wait=30))

    assert waited is not None and waited.taken_over is not None
    assert waited.taken_over.holder == "run-alive"
    assert time.time() - died_at < 1.5 + 2.5  # its lifetime plus one poll


def test_a_renewal_after_another_run_took_the_lease_over_stops_the_holder(bare: Path) -> None:
    first = workspace(bare, "first")
    lease = acquire(first, 1, "run-slow", rules(seconds=0.9))
    assert lease is not None
    time.sleep(1.0)  # its lease expired (a long network outage) ...
    assert acquire(workspace(bare, "second"), 1, "run-next", rules(seconds=60)) is not None
    lost: list[bool] = []

    with Heartbeat(first, lease, rules(seconds=0.9), on_lost=lambda: lost.append(True)):
        time.sleep(1.2)

    assert lost == [True] and lease.lost
    assert fetch_lease(workspace(bare, "look"), REF).holder == "run-next"  # type: ignore[union-attr]


def test_the_lease_ref_holds_one_commit_however_often_it_changed(bare: Path) -> None:
    """Every take, renewal and release used to add a commit to the ref's chain (it grew
    without bound on a busy issue); the ref now points at a single root commit whose tree is
    the latest history."""
    history = bare.parent / "history.jsonl"
    for run in range(4):
        ws = workspace(bare, f"ws-{run}")
        lease = acquire(ws, 1, f"run-{run}", rules(seconds=0.9, wait=5))
        assert lease is not None
        with Heartbeat(ws, lease, rules(seconds=0.9), on_lost=lambda: None):
            time.sleep(0.7)
        history.write_text(f'{{"run": {run}}}\n', encoding="utf-8")
        release(ws, lease, history, WHO)

    assert git(bare, "rev-list", "--count", REF) == "1"
    assert git(bare, "show", f"{REF}:history.jsonl") == '{"run": 3}'
    assert "state: free" in git(bare, "log", "-1", "--format=%B", REF)


def test_the_wait_for_a_living_holder_ends_when_the_job_is_cancelled(bare: Path) -> None:
    hold(bare, "run-alive", str(int(time.time()) + 60))
    told: list[str] = []
    polls: list[float] = []

    def poll(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 2:
            told.append("cancelled (SIGTERM)")  # the signal handler ran during this sleep

    job = rules(wait=600, sleep=poll, cancelled=lambda: told[-1] if told else "")
    with pytest.raises(LeaseBusy, match=r"was cancelled \(SIGTERM\) while it waited"):
        acquire(workspace(bare, "ws"), 1, "run-waiting", job)
    assert len(polls) == 2


# -- planner lease release ---------------------------------------------------------------------


@pytest.fixture
def checkout(bare: Path) -> Path:
    seed = bare.parent / "checkout"
    git(bare.parent, "clone", "-q", str(bare), str(seed))
    return seed


def test_lease_release_frees_the_lease_of_a_run_that_is_gone_and_keeps_its_history(
    bare: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = workspace(bare, "ws")
    lease = acquire(ws, 1, "run-gone", rules())
    assert lease is not None
    history = bare.parent / "history.jsonl"
    history.write_text('{"type": "run_start"}\n', encoding="utf-8")
    release(ws, lease, history, WHO)
    lease = acquire(ws, 1, "run-gone", rules(seconds=10**7))  # a lease that is far too long
    assert lease is not None

    code = main(["lease", "release", "--issue", "1", "--repo", str(checkout)])

    assert code == 0
    assert "Released the lease of issue 1 (held by run run-gone)" in capsys.readouterr().out
    assert "state: free" in git(bare, "log", "-1", "--format=%B", REF)
    assert git(bare, "show", f"{REF}:history.jsonl") == '{"type": "run_start"}'
    assert acquire(ws, 1, "run-next", rules(sleep=never_sleep)) is not None


def test_lease_release_refuses_a_lease_renewed_lately_unless_forced(
    bare: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hold(bare, "run-alive", str(int(time.time()) + 60))

    refused = main(["lease", "release", "--issue", "1", "--repo", str(checkout)])
    assert refused != 0
    assert "run run-alive renewed the lease of issue 1 lately" in capsys.readouterr().err
    assert "state: held" in git(bare, "log", "-1", "--format=%B", REF)

    forced = main(["lease", "release", "--issue", "1", "--repo", str(checkout), "--force"])
    assert forced == 0
    assert "state: free" in git(bare, "log", "-1", "--format=%B", REF)


def test_lease_release_of_a_free_lease_changes_nothing(
    bare: Path, checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["lease", "release", "--issue", "7", "--repo", str(checkout)]) == 0
    assert "not held: nothing to release" in capsys.readouterr().out
