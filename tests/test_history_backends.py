"""History backends: the cache backend's report, and the artifact backend against a fake GitHub.

The artifact tests run the real backend over real sockets against tests/support/fake_artifacts.py
(list -> /zip -> 302 -> blob storage that rejects an Authorization header) and check every API
request against GitHub's OpenAPI description. Archives are real zips of real history files.
"""

from __future__ import annotations

import io
import json
import logging
import re
import stat
import zipfile
from pathlib import Path
from typing import Any

import pytest
import requests

from planner.core.errors import ApiError, ConfigError
from planner.memory.history import PlanningHistoryStore, task_uuid
from planner.storage import (
    ArtifactHistoryBackend,
    CacheHistoryBackend,
    artifact_name,
    history_backend,
)
from planner.storage.archive import extract_archive
from tests.support.fake_artifacts import FORK_REPOSITORY_ID, FakeArtifactServer
from tests.support.openapi import OpenApiChecker, SchemaValidator

SUBSET = Path(__file__).parent / "fixtures" / "github" / "openapi-subset.json"
REPOSITORY = "octo-org/hello-world"
TOKEN = "ghs_secretTokenValue123"
ISSUE = "7"


@pytest.fixture(scope="module")
def checker() -> OpenApiChecker:
    return OpenApiChecker.load(SUBSET)


@pytest.fixture
def fake() -> Any:
    with FakeArtifactServer(REPOSITORY, TOKEN) as server:
        yield server


def history_file(issue: str, events: list[str]) -> tuple[str, bytes]:
    """A history file as the store writes it, one entry per event: (its name, its bytes).

    Fixed timestamps keep the bytes, and so the damage tests, identical from run to run.
    """
    lines = [
        json.dumps(
            {
                "type": "human_input",  # any known entry type: unknown ones are skipped
                "timestamp": f"2026-01-01T00:00:{index % 60:02d}.000Z",
                "repository": REPOSITORY,
                "issue_id": issue,
                "run_id": "run1",
                "action": event,
                "detail": "x" * 40,
            },
            separators=(",", ":"),
        )
        for index, event in enumerate(events)
    ]
    return f"{task_uuid(REPOSITORY, issue)}.jsonl", "".join(f"{line}\n" for line in lines).encode()


class Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes data descriptors, as streaming zippers do."""

    def __init__(self) -> None:
        self.buffer = io.BytesIO()

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self.buffer.write(data)

    def tell(self) -> int:
        raise OSError("unseekable")


def make_zip(
    files: dict[str, bytes], symlinks: tuple[str, ...] = (), *, streamed: bool = False
) -> bytes:
    target = Unseekable() if streamed else io.BytesIO()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        for name in symlinks:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return (target.buffer if isinstance(target, Unseekable) else target).getvalue()


def actions(directory: Path, issue: str = ISSUE) -> list[str]:
    store = PlanningHistoryStore(directory, REPOSITORY, issue)
    return [str(entry["action"]) for entry in store.entries()]


def actions_or_none(directory: Path, issue: str) -> list[str | None]:
    store = PlanningHistoryStore(directory, REPOSITORY, issue)
    return [entry.get("action") for entry in store.entries()]


def backend(fake: FakeArtifactServer, **options: Any) -> ArtifactHistoryBackend:
    return ArtifactHistoryBackend(fake.base_url, REPOSITORY, TOKEN, **options)


def no_history_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("no history")]


# ------------------------------------------------------------------------------------ cache


def test_cache_backend_reports_what_the_cache_step_restored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    directory = tmp_path / "planning_history"
    cache = CacheHistoryBackend()

    assert cache.restore(directory, ISSUE) is False
    assert no_history_lines(caplog) == [
        f"no history: first run or evicted cache (nothing in {directory})"
    ]

    name, content = history_file(ISSUE, ["read", "write"])
    directory.mkdir()
    (directory / name).write_bytes(content)
    assert cache.restore(directory, ISSUE) is True
    cache.save(directory, ISSUE)
    assert (directory / name).read_bytes() == content, "save() must leave the directory alone"
    assert len(no_history_lines(caplog)) == 1


def test_backend_names(fake: FakeArtifactServer) -> None:
    options = {"api_url": fake.base_url, "repository": REPOSITORY, "token": TOKEN}
    assert isinstance(history_backend("cache", **options), CacheHistoryBackend)
    assert isinstance(history_backend("artifact", **options), ArtifactHistoryBackend)
    with pytest.raises(ConfigError, match="'s3': must be cache or artifact"):
        history_backend("s3", **options)


# ------------------------------------------------------------------------------ artifact


def test_restores_the_newest_unexpired_artifact_without_leaking_the_token(
    tmp_path: Path, fake: FakeArtifactServer, checker: OpenApiChecker
) -> None:
    name, old = history_file(ISSUE, ["first"])
    _, new = history_file(ISSUE, ["first", "second"])
    _, expired = history_file(ISSUE, ["first", "second", "expired"])
    fake.add(artifact_name(ISSUE), make_zip({name: old}), "2026-01-01T10:00:00Z")
    newest = fake.add(artifact_name(ISSUE), make_zip({name: new}), "2026-01-02T10:00:00Z")
    fake.add(artifact_name(ISSUE), make_zip({name: expired}), "2026-01-03T10:00:00Z", expired=True)
    fake.add(artifact_name("8"), make_zip({"other.jsonl": b"{}\n"}), "2026-01-04T10:00:00Z")
    directory = tmp_path / "planning_history"

    restorer = backend(fake)
    assert restorer.restore(directory, ISSUE) is True

    assert actions(directory) == ["first", "second"]
    assert restorer.problems == []
    api = fake.api_requests()
    assert [r.path for r in api] == [
        f"/repos/{REPOSITORY}/actions/artifacts",
        f"/repos/{REPOSITORY}/actions/artifacts/{newest.id}/zip",
    ]
    assert api[0].query == {"name": "planner-history-7", "per_page": "100"}
    for request in api:
        checker.assert_valid(request.method, request.path, request.query)
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
    blob = fake.blob_requests()
    assert len(blob) == 1 and "authorization" not in blob[0].headers
    assert all(TOKEN not in f"{r.path}?{r.query}" for r in fake.requests)


def test_no_artifact_is_a_first_run_said_once(
    tmp_path: Path, fake: FakeArtifactServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    directory = tmp_path / "planning_history"

    assert backend(fake).restore(directory, ISSUE) is False

    assert no_history_lines(caplog) == [
        "no history: first run or expired artifact (no usable planner-history-7)"
    ]
    assert not fake.blob_requests()
    assert not directory.exists() or not any(directory.iterdir())


def test_expired_and_gone_artifacts_are_skipped(
    tmp_path: Path, fake: FakeArtifactServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    name, content = history_file(ISSUE, ["old"])
    fake.add(artifact_name(ISSUE), make_zip({name: content}), "2026-01-01T00:00:00Z", expired=True)
    gone = fake.add(artifact_name(ISSUE), make_zip({name: content}), "2026-01-02T00:00:00Z")
    gone.gone = True  # listed as unexpired, but expired before the download (410)

    assert backend(fake).restore(tmp_path / "planning_history", ISSUE) is False

    assert [r.path.rsplit("/", 2)[-2:] for r in fake.api_requests()[1:]] == [[str(gone.id), "zip"]]
    assert not fake.blob_requests()
    assert len(no_history_lines(caplog)) == 1


def test_an_artifact_uploaded_by_a_fork_is_ignored(
    tmp_path: Path, fake: FakeArtifactServer
) -> None:
    name, own = history_file(ISSUE, ["ours"])
    _, forged = history_file(ISSUE, ["forged"])
    fake.add(artifact_name(ISSUE), make_zip({name: own}), "2026-01-01T00:00:00Z")
    fake.add(
        artifact_name(ISSUE),
        make_zip({name: forged}),
        "2026-01-09T00:00:00Z",
        head_repository_id=FORK_REPOSITORY_ID,
    )
    directory = tmp_path / "planning_history"

    assert backend(fake).restore(directory, ISSUE) is True

    assert actions(directory) == ["ours"]


def test_a_corrupt_archive_is_reported_and_an_older_one_used(
    tmp_path: Path, fake: FakeArtifactServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    name, older = history_file(ISSUE, ["older"])
    fake.add(artifact_name(ISSUE), make_zip({name: older}), "2026-01-01T00:00:00Z")
    fake.add(artifact_name(ISSUE), b"this is not a zip archive" * 10, "2026-01-02T00:00:00Z")
    directory = tmp_path / "planning_history"
    restorer = backend(fake)

    assert restorer.restore(directory, ISSUE) is True

    assert actions(directory) == ["older"]
    assert len(restorer.problems) == 1 and "no readable table of contents" in restorer.problems[0]
    assert no_history_lines(caplog) == []


def test_nothing_readable_is_no_history_said_once(
    tmp_path: Path, fake: FakeArtifactServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    fake.add(artifact_name(ISSUE), b"PK\x03\x04 cut", "2026-01-02T00:00:00Z")
    restorer = backend(fake)

    assert restorer.restore(tmp_path / "planning_history", ISSUE) is False

    assert restorer.problems
    assert no_history_lines(caplog) == [
        "no history: nothing readable in the planner-history-7 artifacts"
    ]


@pytest.mark.parametrize("streamed", [False, True], ids=["sized", "data-descriptors"])
def test_a_download_cut_off_midway_keeps_every_readable_entry(
    tmp_path: Path, fake: FakeArtifactServer, streamed: bool
) -> None:
    first_name, first = history_file(ISSUE, ["a1", "a2", "a3"])
    events = [f"b{number}-{'y' * (number % 13)}" for number in range(400)]
    second_name, second = history_file("9", events)
    data = make_zip({first_name: first, second_name: second}, streamed=streamed)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        cut = archive.getinfo(second_name)
        assert bool(cut.flag_bits & 0x08) is streamed
        middle = cut.header_offset + 30 + len(second_name) + cut.compress_size // 2
    fake.add(artifact_name(ISSUE), data, "2026-01-01T00:00:00Z", truncate_at=middle)
    directory = tmp_path / "planning_history"
    restorer = backend(fake)

    assert restorer.restore(directory, ISSUE) is True

    assert actions(directory) == ["a1", "a2", "a3"]
    kept = (directory / second_name).read_bytes()
    assert second.startswith(kept) and kept.endswith(b"\n")
    assert 0 < kept.count(b"\n") < len(events)
    assert actions(directory, "9") == events[: kept.count(b"\n")]
    problems = " | ".join(restorer.problems)
    assert "broke off" in problems and "does not match its recorded digest" in problems
    assert f"complete line(s) of {second_name}" in problems


def test_a_damaged_entry_in_an_intact_archive_keeps_the_other_entries(
    tmp_path: Path, fake: FakeArtifactServer
) -> None:
    first_name, first = history_file(ISSUE, ["a1", "a2"])
    second_name, second = history_file("9", [f"b{n}" for n in range(300)])
    data = bytearray(make_zip({first_name: first, second_name: second, "notes.txt": b"n" * 500}))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as archive:
        info = archive.getinfo(second_name)
        start = info.header_offset + 30 + len(second_name)
    for offset in range(start + info.compress_size // 2, start + info.compress_size // 2 + 8):
        data[offset] ^= 0xFF
    fake.add(artifact_name(ISSUE), bytes(data), "2026-01-01T00:00:00Z")
    directory = tmp_path / "planning_history"
    restorer = backend(fake)

    assert restorer.restore(directory, ISSUE) is True

    assert actions(directory) == ["a1", "a2"]
    assert (directory / "notes.txt").read_bytes() == b"n" * 500
    [problem] = restorer.problems
    assert re.fullmatch(
        rf"artifact 1: kept \d+ complete line\(s\) of {second_name}: "
        r"its checksum does not match \(corrupt data\)",
        problem,
    )
    # The damage sits mid-stream: the lines before it are intact; the store skips unreadable ones.
    restored = actions_or_none(directory, "9")
    assert restored[:100] == [f"b{n}" for n in range(100)]
    assert restored != [f"b{n}" for n in range(300)]


def test_a_local_history_file_is_never_overwritten(
    tmp_path: Path, fake: FakeArtifactServer
) -> None:
    name, remote = history_file(ISSUE, ["remote"])
    fake.add(
        artifact_name(ISSUE), make_zip({name: remote, "sub/extra.jsonl": b"{}\n"}), "2026-01-01"
    )
    directory = tmp_path / "planning_history"
    PlanningHistoryStore(directory, REPOSITORY, ISSUE).append("human_input", action="local")

    assert backend(fake).restore(directory, ISSUE) is True

    assert actions(directory) == ["local"]
    assert (directory / "sub" / "extra.jsonl").read_bytes() == b"{}\n"


def test_a_forbidden_listing_names_the_missing_permission(
    tmp_path: Path, fake: FakeArtifactServer
) -> None:
    fake.list_status = 403

    with pytest.raises(ApiError) as raised:
        backend(fake).restore(tmp_path / "planning_history", ISSUE)

    assert raised.value.status == 403
    assert "actions: read" in str(raised.value)
    assert TOKEN not in str(raised.value)


def test_the_fake_listing_is_shaped_like_github(
    fake: FakeArtifactServer, checker: OpenApiChecker
) -> None:
    fake.add(artifact_name(ISSUE), make_zip({"a.jsonl": b"{}\n"}), "2026-01-01T00:00:00Z")
    fake.add(artifact_name(ISSUE), b"", "2026-01-02T00:00:00Z", expired=True, digest=None)
    url = f"{fake.base_url}/repos/{REPOSITORY}/actions/artifacts"
    body = requests.get(url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()

    operation = checker.document["paths"]["/repos/{owner}/{repo}/actions/artifacts"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert SchemaValidator(checker.resolve).problems(schema, body, "response") == []
    assert [artifact["expired"] for artifact in body["artifacts"]] == [True, False]


# ------------------------------------------------------------------------------- archives


def test_unsafe_entries_are_refused_and_safe_ones_extracted(tmp_path: Path) -> None:
    directory = tmp_path / "history"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    directory.mkdir()
    (directory / "outside").symlink_to(elsewhere)
    data = make_zip(
        {
            "../escape.jsonl": b"{}\n",
            "/absolute.jsonl": b"{}\n",
            "sub/../../climb.jsonl": b"{}\n",
            "C:/drive.jsonl": b"{}\n",
            "back\\slash.jsonl": b"{}\n",
            "outside/through-link.jsonl": b"{}\n",
            "./ok/nested.jsonl": b'{"type":"x"}\n',
        },
        symlinks=("link.jsonl",),
    )

    report = extract_archive(data, directory)

    assert report.written == ["ok/nested.jsonl"]
    assert (directory / "ok" / "nested.jsonl").read_bytes() == b'{"type":"x"}\n'
    refused = " | ".join(report.problems)
    for name in ("../escape", "/absolute", "climb", "C:/drive", "back\\\\slash", "link.jsonl"):
        assert name in refused, name
    assert "outside/through-link.jsonl: it leads through a symbolic link" in refused
    assert not any(elsewhere.iterdir())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "history"]
    assert not (directory / "link.jsonl").exists()


def test_extraction_is_bounded_in_size(tmp_path: Path) -> None:
    data = make_zip({"small.jsonl": b"{}\n", "huge.bin": b"\0" * 200_000})

    report = extract_archive(data, tmp_path / "history", max_bytes=50_000)

    assert report.written == ["small.jsonl"]
    assert report.problems == ["dropped huge.bin: the archive is larger than the size limit"]
