import pytest
from toolz import get_in


def test_a_wrong_key_type_gives_the_default():
    order = {"items": ["apple", "pear"]}
    assert get_in(["items", "first"], order, default="none") == "none"
    assert get_in(["items", 0, "x"], order) is None
    assert get_in(["items", 1], order) == "pear"


def test_no_default_still_raises():
    with pytest.raises(TypeError):
        get_in(["items", "first"], {"items": []}, no_default=True)
    with pytest.raises(KeyError):
        get_in(["y"], {}, no_default=True)
