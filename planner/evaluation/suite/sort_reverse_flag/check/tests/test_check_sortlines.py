from pathlib import Path

import pytest

from sortlines import main


def test_reverse(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "f.txt"
    source.write_text("b\nc\na\n")
    assert main(["--reverse", str(source)]) == 0
    assert capsys.readouterr().out == "c\nb\na\n"
    assert main([str(source)]) == 0
    assert capsys.readouterr().out == "a\nb\nc\n"
