"""planner installs like any Python tool: a built wheel gives a working `planner` command.

`pip install .` (not editable) once gave a planner that could not find its prompts. This builds
the wheel from a copy of the sources (nothing is written into the worktree), installs it into a
fresh venv and runs a whole pass through the scripted server with the installed `planner`.

To stay fast in the normal suite the venv takes its dependencies from this test environment
(a plain path in a .pth file, so the editable install of the worktree is not loaded) and the
test checks that `planner` really is imported from the wheel. PLANNER_FULL_INSTALL_TEST=1
installs the dependencies from PyPI (or the pip cache) instead, as a user's `pip install` would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from planner import __version__
from planner.testing.scripted_server import ScriptedModelServer
from tests.fake_forge.scenario import one_file_plan
from tests.plans import REFINEMENT_OFF_ENV, git_repo

ROOT = Path(__file__).resolve().parent.parent
FULL = os.environ.get("PLANNER_FULL_INSTALL_TEST") == "1"


def build_wheel(tmp: Path) -> Path:
    source = tmp / "source"
    shutil.copytree(
        ROOT / "planner", source / "planner", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(dist), str(source)], check=True, timeout=100
    )
    [wheel] = dist.glob("planner-*.whl")
    return wheel


def install(wheel: Path, target: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--disable-pip-version-check",
        "-q",
        "--python",
        str(python),
    ]
    subprocess.run(
        [*pip, "install", *([] if FULL else ["--no-deps"]), str(wheel)], check=True, timeout=110
    )
    if not FULL:
        site = subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        # A plain path line: this environment's packages, without processing its .pth files
        # (one of them would load the editable worktree instead of the wheel).
        Path(site, "test-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target / "bin" / "planner"


@pytest.mark.timeout(300 if FULL else 120)
def test_the_built_wheel_runs_a_pass_with_its_packaged_prompts(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    planner = install(wheel, tmp_path / "venv")
    python = planner.parent / "python"
    where = subprocess.run(
        [str(python), "-c", "import planner.text.prompts as p; print(p.__file__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout  # fmt: skip
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel, not the worktree
    version = subprocess.run([str(planner), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"planner {__version__}"  # the one version, in the wheel
    outside = subprocess.run(  # the action's job without a container (docs/self-hosted.md)
        [str(planner.parent / "planner-action")],
        capture_output=True, text=True, env={"PATH": os.environ["PATH"]}, cwd=tmp_path,
    )  # fmt: skip
    assert outside.returncode == 2 and "GITHUB_EVENT_NAME is not set" in outside.stdout

    repo = git_repo(tmp_path / "repo")
    issue = tmp_path / "issue.md"
    issue.write_text("# Add a changelog\n\nKeep a CHANGELOG.md.\n", encoding="utf-8")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        **REFINEMENT_OFF_ENV,
    }
    argv = [str(planner), "run", "--repo", str(repo), "--issue-file", str(issue)]

    missing_key = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert missing_key.returncode == 2
    assert "no model API key" in missing_key.stderr and "Traceback" not in missing_key.stderr

    with ScriptedModelServer(one_file_plan("CHANGELOG.md", "# Changelog\n", "Add it")) as model:
        env.update(OPENAI_API_KEY="k", OPENAI_BASE_URL=model.base_url, OPENAI_MODEL="scripted")
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
        model.assert_consumed()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "TemplateNotFound" not in done.stderr
    assert (repo / "CHANGELOG.md").read_text(encoding="utf-8") == "# Changelog\n"
