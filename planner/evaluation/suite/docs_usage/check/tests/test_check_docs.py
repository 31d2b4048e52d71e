from pathlib import Path


def test_readme_has_a_usage_section() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "## Usage" in readme
    usage = readme.split("## Usage", 1)[1].split("\n## ", 1)[0]
    assert "```" in usage and "python greet.py" in usage
    assert "--name" in usage and "--shout" in usage
