"""The CI layer: the container entry point, one event in and one outcome out (job: a table from
event kind to handlers/), the run on one issue, and beside them events/ (triggers), branch/
(git and the lease), durability/, report/ (the tracking comment and outputs), gate/
(approvals), review/ and forges/ (GitHub, GitLab, local). It uses the engine, never the
reverse."""
