"""Grounding of one pass: what the planning prompt shows of the repository (issue 16).

planner.grounding.phase asks `planning_context(run, store)` for the variables of the planning
prompt before each plan is made. The map is built for every plan, so a plan made again later in
the pass sees the files as they are then (the file index is cached per commit, and only files
changed since are read again); the bounded exploration runs at most once per pass, when
configured (by default only when the map had to leave files out). The history records what the
model was shown: the map's digest (`repository_map`: hash, files, size — never the map) and the
exploration (`exploration`: its actions and the findings, which the prompt showed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.config import PlannerConfig
from planner.grounding.exploration import ExplorationPort, explore
from planner.grounding.repo_map import RepositoryMap, build_map
from planner.plan.clarifications import issue_reference
from planner.text.issue import IssueContext


class Grounding:
    def __init__(self, config: PlannerConfig, workspace: Path, excluded: tuple[Path, ...]) -> None:
        self.config = config
        self.workspace = workspace
        self.excluded = excluded
        self._latest: RepositoryMap | None = None
        self._recorded: set[str] = set()
        self._findings: str | None = None

    def planning_context(self, port: ExplorationPort, store: Any) -> dict[str, str]:
        """`repository` (the map) and `findings` (the exploration's) for the prompt."""
        repository_map = self._latest = self.repository_map(port.issue)
        if repository_map is None:
            return {"repository": "", "findings": ""}
        if repository_map.sha256 not in self._recorded:
            self._recorded.add(repository_map.sha256)
            store.append("repository_map", **repository_map.digest())
        return {"repository": repository_map.text, "findings": self._explored(port, store)}

    def repository_map(self, issue: IssueContext) -> RepositoryMap | None:
        if not self.config.planning.repository_map.enabled:
            return None
        return build_map(
            self.workspace,
            self.config.planning.repository_map,
            issue_reference(issue),
            self.excluded,
        )

    def _explored(self, port: ExplorationPort, store: Any) -> str:
        if self._findings is None:
            self._findings = ""
            repository_map = self._latest
            if repository_map is not None and self._wanted(repository_map):
                done = explore(port, repository_map.text)
                store.append("exploration", **done.record())
                self._findings = done.findings
        return self._findings

    def _wanted(self, repository_map: RepositoryMap) -> bool:
        mode = self.config.planning.exploration.mode
        return mode == "always" or (mode == "auto" and repository_map.truncated)
