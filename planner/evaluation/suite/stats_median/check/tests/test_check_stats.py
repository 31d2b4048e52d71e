import pytest

from stats import median


def test_median() -> None:
    assert median([3, 1, 2]) == 2
    assert median([4, 1, 3, 2]) == 2.5
    assert median([7]) == 7
    with pytest.raises(ValueError):
        median([])
