from slug import slugify


def test_plain_words() -> None:
    assert slugify("Release Notes") == "release-notes"
