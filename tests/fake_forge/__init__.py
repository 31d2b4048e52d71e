"""Fake GitHub and GitLab servers on 127.0.0.1 with a real bare git repository as origin."""

from tests.fake_forge.core import LoggedRequest, git
from tests.fake_forge.github import FakeGitHub
from tests.fake_forge.gitlab import FakeGitLab

__all__ = ["FakeGitHub", "FakeGitLab", "LoggedRequest", "git"]
