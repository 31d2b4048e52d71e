"""The CI layer: the container entry point, action inputs and outputs, triggers, the tracking
comment, git operations and the forges (GitHub, GitLab, local).
It uses the engine, never the reverse."""
