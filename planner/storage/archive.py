"""Safe extraction of a history archive (a zip), keeping every entry that can be read.

Archives come from the network, so nothing in them is trusted:
- an entry whose name is absolute, climbs out with `..`, uses backslashes or a drive letter, or is
  a symbolic link is refused; only regular files and directories are ever created, and never
  through a symbolic link already in the directory;
- a file that already exists locally is kept as it is (it can only be the same or newer);
- the total size written is bounded, so a zip bomb cannot fill the disk.

A damaged archive is read as far as it goes. When the central directory (the table of contents
at the end) is missing — a truncated download — the entries are found by their local headers
instead. A damaged `.jsonl` file keeps its complete lines up to the damage (the history store
skips a line it cannot parse); any other damaged file is dropped. Every problem is reported.
"""

from __future__ import annotations

import os
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path, PurePosixPath

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
CHUNK = 64 * 1024
LOCAL_HEADER = b"PK\x03\x04"
LOCAL_HEADER_FORMAT = "<4sHHHHHIIIHH"
LOCAL_HEADER_SIZE = struct.calcsize(LOCAL_HEADER_FORMAT)
DATA_DESCRIPTOR = b"PK\x07\x08"
FLAG_DATA_DESCRIPTOR = 0x08
FLAG_UTF8 = 0x800
STORED, DEFLATED = 0, 8
CRC_MISMATCH = "its checksum does not match (corrupt data)"


@dataclass
class Entry:
    """One archive member as far as it could be read."""

    name: str
    content: bytes = b""
    is_dir: bool = False
    is_symlink: bool = False
    damage: str = ""


@dataclass
class ExtractReport:
    """What extraction did: files written, local files kept, and every problem."""

    written: list[str] = field(default_factory=list)
    kept_local: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class SizeLimit:
    """Counts bytes across the whole archive and refuses more than `limit`."""

    def __init__(self, limit: int) -> None:
        self.remaining = limit

    def take(self, size: int) -> bool:
        self.remaining -= size
        return self.remaining >= 0


def extract_archive(
    data: bytes, directory: Path, *, max_bytes: int = DEFAULT_MAX_BYTES
) -> ExtractReport:
    """Extract the zip `data` into `directory` as safely and as completely as possible."""
    report = ExtractReport()
    directory.mkdir(parents=True, exist_ok=True)
    for entry in read_entries(data, SizeLimit(max_bytes), report):
        write_entry(entry, directory, report)
    return report


# ------------------------------------------------------------------------------- reading


def read_entries(data: bytes, limit: SizeLimit, report: ExtractReport) -> Iterator[Entry]:
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, struct.error, EOFError) as exc:
        report.problems.append(
            f"the archive has no readable table of contents ({exc}); reading its entries one by one"
        )
        yield from scan_local_entries(data, limit)
        return
    with archive:
        for info in archive.infolist():
            yield read_member(archive, info, limit)


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: SizeLimit) -> Entry:
    entry = Entry(info.filename, is_dir=info.is_dir())
    entry.is_symlink = stat.S_ISLNK(info.external_attr >> 16)
    if entry.is_dir or entry.is_symlink:
        return entry
    chunks: list[bytes] = []
    try:
        with archive.open(info) as member:
            # zipfile raises on a bad CRC and drops the data of that read; check it ourselves.
            member._expected_crc = None  # type: ignore[attr-defined]
            while chunk := member.read(CHUNK):
                if not limit.take(len(chunk)):
                    entry.damage = "the archive is larger than the size limit"
                    break
                chunks.append(chunk)
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        NotImplementedError,
        RuntimeError,
    ) as exc:
        entry.damage = str(exc) or type(exc).__name__
    entry.content = b"".join(chunks)
    if not entry.damage and zlib.crc32(entry.content) != info.CRC:
        entry.damage = CRC_MISMATCH
    return entry


def scan_local_entries(data: bytes, limit: SizeLimit) -> Iterator[Entry]:
    """Entries found by their local headers, for an archive without a central directory."""
    offset = data.find(LOCAL_HEADER)
    while offset >= 0 and offset + LOCAL_HEADER_SIZE <= len(data):
        entry, end = read_local_entry(data, offset, limit)
        yield entry
        offset = data.find(LOCAL_HEADER, max(end, offset + 1))


def read_local_entry(data: bytes, offset: int, limit: SizeLimit) -> tuple[Entry, int]:
    """The entry whose local header starts at `offset`, and where its data ends."""
    fields = struct.unpack_from(LOCAL_HEADER_FORMAT, data, offset)
    flags, method, crc, compressed_size = fields[2], fields[3], fields[6], fields[7]
    name_length, extra_length = fields[9], fields[10]
    start = offset + LOCAL_HEADER_SIZE
    raw_name = data[start : start + name_length]
    name = raw_name.decode("utf-8" if flags & FLAG_UTF8 else "cp437", errors="replace")
    entry = Entry(name, is_dir=name.endswith("/"))
    start += name_length + extra_length
    sized = not flags & FLAG_DATA_DESCRIPTOR
    if entry.is_dir:
        return entry, start
    if method == DEFLATED:
        end = inflate(entry, data, start, compressed_size if sized else None, limit)
    elif method == STORED and sized:
        end = copy_stored(entry, data, start, compressed_size, limit)
    else:
        entry.damage = "an entry of unknown size that cannot be recovered without the table"
        return entry, start
    expected = crc if sized else descriptor_crc(data, end)
    if not entry.damage and expected is not None and zlib.crc32(entry.content) != expected:
        entry.damage = CRC_MISMATCH
    return entry, end


def inflate(entry: Entry, data: bytes, start: int, size: int | None, limit: SizeLimit) -> int:
    """Decompress from `start`; returns where the compressed data ended."""
    stop = len(data) if size is None else min(len(data), start + size)
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    chunks: list[bytes] = []
    position = start
    try:
        while position < stop and not inflater.eof:
            block = data[position : min(stop, position + CHUNK)]
            position += len(block)
            chunks.append(drain(inflater, block))
            if not limit.take(len(chunks[-1])):
                entry.damage = "the archive is larger than the size limit"
                break
    except zlib.error as exc:
        entry.damage = f"its compressed data is corrupt ({exc})"
    entry.content = b"".join(chunks)
    if not entry.damage and not inflater.eof:
        entry.damage = "it is cut short (truncated archive)"
    return position - len(inflater.unused_data)


def drain(inflater: zlib._Decompress, block: bytes) -> bytes:
    """Everything `block` decompresses to, produced in bounded steps."""
    produced = [inflater.decompress(block, CHUNK * 16)]
    while inflater.unconsumed_tail and not inflater.eof:
        produced.append(inflater.decompress(inflater.unconsumed_tail, CHUNK * 16))
    return b"".join(produced)


def copy_stored(entry: Entry, data: bytes, start: int, size: int, limit: SizeLimit) -> int:
    entry.content = data[start : start + size]
    if len(entry.content) < size:
        entry.damage = "it is cut short (truncated archive)"
    elif not limit.take(size):
        entry.damage = "the archive is larger than the size limit"
    return start + len(entry.content)


def descriptor_crc(data: bytes, end: int) -> int | None:
    """The CRC of the data descriptor after an entry (its signature is optional)."""
    if data[end : end + 4] == DATA_DESCRIPTOR:
        end += 4
    if end + 4 > len(data):
        return None
    return int(struct.unpack_from("<I", data, end)[0])


# ------------------------------------------------------------------------------- writing


def safe_relative(name: str) -> PurePosixPath | None:
    """`name` as a relative path inside the directory, or None if it could escape it."""
    if not name or "\\" in name or "\x00" in name or name.startswith("/"):
        return None
    parts = [part for part in PurePosixPath(name).parts if part != "."]
    if not parts or ".." in parts or parts[0].endswith(":"):
        return None
    return PurePosixPath(*parts)


def write_entry(entry: Entry, directory: Path, report: ExtractReport) -> None:
    relative = safe_relative(entry.name)
    if relative is None:
        report.problems.append(f"refused {entry.name!r}: its path leaves the history directory")
    elif entry.is_symlink:
        report.problems.append(f"refused {entry.name!r}: symbolic links are never extracted")
    else:
        try:
            if entry.is_dir:
                make_directory(directory, relative, report)
            else:
                write_file(entry, directory, relative, report)
        except OSError as exc:  # a name too long for the file system, say: skip this entry
            shown = entry.name if len(entry.name) <= 120 else entry.name[:120] + "…"
            report.problems.append(f"refused {shown!r}: {exc.strerror or exc}")


def make_directory(directory: Path, relative: PurePosixPath, report: ExtractReport) -> None:
    if inside(directory, directory / relative):
        (directory / relative).mkdir(parents=True, exist_ok=True)
    else:
        report.problems.append(f"refused {relative}/: it leads through a symbolic link")


def write_file(
    entry: Entry, directory: Path, relative: PurePosixPath, report: ExtractReport
) -> None:
    content = salvageable(entry, relative, report)
    if content is None:
        return
    target = directory / relative
    if not inside(directory, target.parent) or target.is_symlink():
        report.problems.append(f"refused {relative}: it leads through a symbolic link")
    elif target.exists():
        report.kept_local.append(str(relative))
    else:
        atomic_write(target, content)
        report.written.append(str(relative))


def salvageable(entry: Entry, relative: PurePosixPath, report: ExtractReport) -> bytes | None:
    """The content worth writing: all of it, the complete JSONL lines of a damaged file, or none."""
    if not entry.damage:
        return entry.content
    if relative.suffix != ".jsonl":
        report.problems.append(f"dropped {relative}: {entry.damage}")
        return None
    kept = entry.content[: entry.content.rfind(b"\n") + 1]
    if not kept:
        report.problems.append(f"dropped {relative}: {entry.damage}")
        return None
    lines = kept.count(b"\n")
    report.problems.append(f"kept {lines} complete line(s) of {relative}: {entry.damage}")
    return kept


def inside(directory: Path, path: Path) -> bool:
    """Whether `path` resolves inside `directory` (a symbolic link on the way could lead out)."""
    return path.resolve().is_relative_to(directory.resolve())


def atomic_write(target: Path, content: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".restore-")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise
