import pytest

import settings


def test_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APP_PORT", raising=False)
    assert settings.port() == 8000
