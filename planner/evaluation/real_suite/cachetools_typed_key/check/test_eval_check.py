from cachetools import LRUCache, cached
from cachetools.keys import hashkey, typedkey


def test_positional_argument_types_are_part_of_the_key():
    assert typedkey(3) != typedkey(3.0)
    assert typedkey(1, "a") == typedkey(1, "a")
    assert typedkey(x=3) != typedkey(x=3.0)
    assert hashkey(3) == hashkey(3.0)


def test_cached_with_typedkey():
    @cached(LRUCache(maxsize=10), key=typedkey)
    def show(x):
        return repr(x)

    assert show(3) == "3"
    assert show(3.0) == "3.0"
