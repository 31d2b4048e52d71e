"""The messages of the history's storage between CI runs (planner/storage/): the cache,
GitHub artifacts, GitLab job artifacts."""

from __future__ import annotations

from planner.core.catalogue.entry import Entry

STORAGE: tuple[Entry, ...] = (
    Entry(
        "PLN162",
        "history_backend = {}: must be {}",
        "configerror--configuration-exit-code-2",
    ),
    Entry(
        "PLN163",
        "no history: nothing readable in the planner-history-{} artifacts",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN164",
        "ignored {} {} artifact(s) uploaded by a fork's workflow",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN165",
        "artifact {} does not match its recorded digest (corrupt)",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN166",
        "artifact {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN167",
        "GitHub API GET {} did not answer JSON",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN168",
        "GitHub API {} {} answered {}: {}{}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN169",
        "{} API GET {} failed: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN170",
        "artifact storage {} could not be reached: {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN171",
        "artifact storage {} answered {}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN172",
        "the artifact is larger than {} bytes; cut short",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN173",
        "the download from {} broke off after {}{} bytes{}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN174",
        "the history directory {} is outside CI_PROJECT_DIR, so the job's artifacts cannot "
        "carry it",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN175",
        "GitLab API GET {} did not answer JSON",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN176",
        "artifacts of job {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN177",
        "GitLab API {} {} answered {}: {}{}",
        "apierror--the-model-endpoint-or-the-forge-exit-code-1",
    ),
    Entry(
        "PLN178",
        "payload {} does not hold the text it names; it is not used",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN179",
        "could not delete {}: {}",
        "warnings-in-the-log",
    ),
    Entry(
        "PLN180",
        "could not rewrite {}: {}",
        "warnings-in-the-log",
    ),
)
