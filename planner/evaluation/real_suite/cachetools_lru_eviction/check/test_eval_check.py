from cachetools import LRUCache


def test_the_least_recently_used_entry_goes():
    cache = LRUCache(maxsize=2)
    cache["a"] = 1
    cache["b"] = 2
    assert cache["a"] == 1
    cache["c"] = 3
    assert sorted(cache) == ["a", "c"]


def test_popitem_returns_the_oldest():
    cache = LRUCache(maxsize=3)
    for key in "xyz":
        cache[key] = key
    cache["x"]
    assert cache.popitem() == ("y", "y")
