"""The fake GitHub (tests/fake_forge) as the benchmarks' CI jobs see it."""

from __future__ import annotations

from tests.fake_forge import FakeGitHub


def github_env(fake: FakeGitHub, **extra: str) -> dict[str, str]:
    """The variables a GitHub Actions job on `fake` has, and `extra`."""
    return {
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": fake.base_url,
        "GITHUB_REPOSITORY": fake.repository,
        "GITHUB_TOKEN": fake.token,
        **extra,
    }
