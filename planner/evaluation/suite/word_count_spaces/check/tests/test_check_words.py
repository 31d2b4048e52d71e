from words import word_count


def test_whitespace_runs_and_blank_text() -> None:
    assert word_count("a  b") == 2
    assert word_count("a\tb\nc") == 3
    assert word_count("") == 0
    assert word_count("   ") == 0
