# The image of the planner action. Releases push it to ghcr.io/planner-dev/planner (amd64 and
# arm64) and the released action.yml runs it; on main, action.yml builds this file. It stays small
# and everything in it is pinned. GitHub's rules for Docker actions: no USER (the
# runner mounts the workspace owned by another user; entrypoint.py hands created files back) and
# no WORKDIR (the runner sets the working directory to GITHUB_WORKSPACE itself).
FROM python:3.12.12-slim-bookworm

# git commits and pushes the issue's branch. Pinned to bookworm's 2.39 line rather than one exact
# Debian revision: the archive keeps only the newest security revision (-0+deb12uN), so an exact
# pin would stop every build of this action at the next git security update.
RUN apt-get update \
    && apt-get install -y --no-install-recommends 'git=1:2.39.*' \
    && rm -rf /var/lib/apt/lists/*

# Runtime dependencies only, pinned, in a venv without pip (the base image's pip installs into it).
COPY requirements-runtime.txt /tmp/requirements-runtime.txt
RUN python -m venv --without-pip /opt/planner \
    && pip --python /opt/planner/bin/python install --no-cache-dir --disable-pip-version-check \
        -r /tmp/requirements-runtime.txt \
    && rm /tmp/requirements-runtime.txt

# The package is not installed: /app is on sys.path because entrypoint.py lives there; the
# prompts are package data in /app/planner/prompts.
COPY planner /app/planner
COPY entrypoint.py /app/entrypoint.py
# Bytecode at build time, not in every job: each job starts a fresh container, and the skip path
# (an event that is not for the planner) should cost little more than starting Python.
RUN /opt/planner/bin/python -m compileall -q /app/planner

ENV PATH=/opt/planner/bin:$PATH \
    PYTHONUNBUFFERED=1

ENTRYPOINT ["/opt/planner/bin/python", "/app/entrypoint.py"]
