import pytest

import settings


def test_port_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APP_PORT", "9090")
    assert settings.port() == 9090
    monkeypatch.delenv("APP_PORT")
    assert settings.port() == 8000
    for bad in ("abc", "0", "70000"):
        monkeypatch.setenv("APP_PORT", bad)
        with pytest.raises(ValueError):
            settings.port()
