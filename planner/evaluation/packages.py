"""Real-repository tasks: a released package's source distribution with one bug put back in.

A task of the real-repository suite names a package, a version and the sha256 of its source
distribution; nothing of the package is kept in this repository. The archive is downloaded
from the package registry with pip (`pip download --no-deps --no-binary :all:`) into a cache
outside the repository (PLANNER_EVAL_CACHE, default ~/.cache/planner/eval) and is used only
when its sha256 is the pinned one, whether it was just downloaded or found in the cache. With
the download left out (`--offline`, CI) a task whose archive is not cached is a clear error.

The archive is unpacked without its top folder, refusing members that would land outside it
or that are links or devices (tarfile's `data` filter), and each recorded edit — a piece of
text replaced by another, which must occur exactly once — puts the bug back in.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from planner.core.errors import UserInputError
from planner.tools.sandbox.safe_env import scrubbed_environment

DOWNLOAD_TIMEOUT_SECONDS = 300
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


@dataclass(frozen=True)
class PackageSource:
    """A released package's source distribution, pinned by version and hash."""

    package: str
    version: str
    sha256: str

    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class RecordedEdit:
    """One small change to a file of the package: `old` (found exactly once) becomes `new`."""

    path: str
    old: str
    new: str


Downloader = Callable[[PackageSource, Path], None]
"""Downloads the source distribution into a folder (the default runs pip)."""


def cache_directory() -> Path:
    configured = os.environ.get("PLANNER_EVAL_CACHE")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "planner" / "eval"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(
    source: PackageSource,
    cache: Path | None = None,
    download: bool = True,
    downloader: Downloader | None = None,
) -> Path:
    """The verified archive of `source`: from the cache, else (with `download`) from the
    registry. An archive whose hash is not the pinned one is never used."""
    folder = (cache or cache_directory()) / "sdists" / f"{source.package}-{source.version}"
    cached = _verified(folder, source)
    if cached is not None:
        return cached
    if not download:
        raise UserInputError(
            f"{source.requirement()} is not in the evaluation cache ({folder}); fetch it first: "
            "planner eval --suite real --fetch-only (--suite holdout for the held-out tasks)"
        )
    with tempfile.TemporaryDirectory(prefix="planner-sdist-") as scratch:
        (downloader or pip_download)(source, Path(scratch))
        archive = _archive_in(Path(scratch), source)
        actual = sha256_of(archive)
        if actual != source.sha256:
            raise UserInputError(
                f"the downloaded {archive.name} has sha256 {actual}, but the task pins "
                f"{source.sha256}: not used"
            )
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.iterdir():
            stale.unlink()
        target = folder / archive.name
        shutil.move(str(archive), target)
    return target


def _verified(folder: Path, source: PackageSource) -> Path | None:
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        if path.name.endswith(ARCHIVE_SUFFIXES) and sha256_of(path) == source.sha256:
            return path
    return None


def _archive_in(folder: Path, source: PackageSource) -> Path:
    archives = [p for p in folder.iterdir() if p.name.endswith(ARCHIVE_SUFFIXES)]
    if len(archives) != 1:
        names = ", ".join(p.name for p in archives) or "nothing"
        raise UserInputError(f"downloading {source.requirement()} gave {names}, not one archive")
    return archives[0]


def pip_download(source: PackageSource, destination: Path) -> None:
    """`pip download` of the source distribution alone (no wheel, no dependencies)."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        "--quiet",
        "--dest",
        str(destination),
        source.requirement(),
    ]
    try:
        done = subprocess.run(
            argv,
            env=scrubbed_environment(os.environ),
            capture_output=True,
            text=True,
            timeout=DOWNLOAD_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserInputError(f"pip download {source.requirement()} failed: {exc}") from None
    if done.returncode != 0:
        raise UserInputError(
            f"pip download {source.requirement()} failed: {(done.stderr or done.stdout)[-800:]}"
        )


def unpack(archive: Path, destination: Path) -> Path:
    """The archive's files under `destination`, without the archive's top folder."""
    with tempfile.TemporaryDirectory(prefix="planner-unpack-") as scratch:
        root = Path(scratch)
        if archive.name.endswith(".zip"):
            _unzip(archive, root)
        else:
            with tarfile.open(archive) as bundle:
                try:
                    bundle.extractall(root, filter="data")
                except (tarfile.TarError, OSError) as exc:
                    raise UserInputError(f"{archive.name} cannot be unpacked: {exc}") from None
        entries = list(root.iterdir())
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() else root
        shutil.copytree(top, destination, symlinks=False)
    return destination


def _unzip(archive: Path, root: Path) -> None:
    with zipfile.ZipFile(archive) as bundle:
        for member in bundle.namelist():
            parts = PurePosixPath(member).parts
            if member.startswith("/") or ".." in parts:
                raise UserInputError(f"{archive.name} holds {member!r}, outside its folder")
        bundle.extractall(root)


def apply_edits(tree: Path, edits: tuple[RecordedEdit, ...]) -> None:
    """Put the task's bug in. Every edit's `old` text must occur exactly once in its file."""
    for edit in edits:
        if edit.path.startswith("/") or ".." in PurePosixPath(edit.path).parts:
            raise UserInputError(f"the recorded edit names {edit.path!r}, outside the package")
        path = tree / edit.path
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UserInputError(
                f"the recorded edit of {edit.path} cannot be applied: {exc}"
            ) from None
        found = text.count(edit.old)
        if found != 1:
            raise UserInputError(
                f"the recorded edit of {edit.path} does not apply: its old text occurs "
                f"{found} times (it must occur once)"
            )
        path.write_bytes(text.replace(edit.old, edit.new).encode("utf-8"))
