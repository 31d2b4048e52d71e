import pytest

from greet import main


def test_shout(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--name", "Ada", "--shout"])
    assert capsys.readouterr().out == "HELLO, ADA!\n"
