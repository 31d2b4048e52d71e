from words import word_count


def test_simple_sentence() -> None:
    assert word_count("one two three") == 3
