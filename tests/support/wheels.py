"""A folder of wheels for pip to install from without any network (pip --no-index
--find-links): pytest and what it needs, zipped from the distributions this test run's own
environment has installed, and small packages made up by a test.

A wheel is a zip of the files a distribution installs below site-packages with its
`.dist-info` (METADATA, WHEEL, RECORD); the installed RECORD lists them, so a pure-Python
distribution that is installed can be zipped back into the wheel it came from.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

SKIPPED = ("INSTALLER", "REQUESTED", "direct_url.json", "RECORD")


def wheelhouse_with_pytest(folder: Path) -> Path:
    """`folder` holding a wheel of pytest and of each distribution it needs here."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in _closure("pytest"):
        _zip_installed(metadata.distribution(name), folder)
    return folder


def made_up_wheel(folder: Path, name: str, module: str, source: str) -> Path:
    """A wheel of distribution `name` 1.0 holding `module`.py with `source`."""
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name.replace('-', '_')}-1.0.dist-info"
    files = {
        f"{module}.py": source.encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    return _write_wheel(folder / f"{name.replace('-', '_')}-1.0-py3-none-any.whl", files, info)


def _closure(name: str) -> list[str]:
    """`name` and every distribution its requirements pull in for this interpreter."""
    seen: list[str] = []
    pending = [name]
    environment = {key: str(value) for key, value in default_environment().items()}
    while pending:
        current = pending.pop()
        if current.lower() in (known.lower() for known in seen):
            continue
        seen.append(current)
        for text in metadata.requires(current) or []:
            requirement = Requirement(text)
            wanted = requirement.marker is None or requirement.marker.evaluate(
                {**environment, "extra": ""}
            )
            if wanted:
                pending.append(requirement.name)
    return seen


def _zip_installed(distribution: metadata.Distribution, folder: Path) -> Path:
    files: dict[str, bytes] = {}
    info = ""
    for entry in distribution.files or []:
        relative = entry.as_posix()
        if relative.startswith("..") or "__pycache__" in relative:
            continue  # scripts outside site-packages: pip writes them from entry_points.txt
        if relative.endswith(".dist-info/" + relative.rsplit("/", 1)[-1]):
            info = relative.split("/", 1)[0]
            if relative.rsplit("/", 1)[-1] in SKIPPED:
                continue
        files[relative] = Path(str(distribution.locate_file(entry))).read_bytes()
    name = distribution.metadata["Name"].replace("-", "_")
    wheel = folder / f"{name}-{distribution.version}-py3-none-any.whl"
    return _write_wheel(wheel, files, info)


def _write_wheel(path: Path, files: dict[str, bytes], info: str) -> Path:
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    record.append(f"{info}/RECORD,,")
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return path


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
