import pytest

from stack import Stack


def test_peek_and_is_empty() -> None:
    stack = Stack()
    assert stack.is_empty()
    with pytest.raises(IndexError, match="peek from empty stack"):
        stack.peek()
    stack.push("a")
    assert stack.peek() == "a" and stack.peek() == "a"
    assert not stack.is_empty()
