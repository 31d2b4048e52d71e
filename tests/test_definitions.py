"""A Python block holding only some definitions of its file is put into the file
(planner.model.definitions): replaced, added, or a class's methods one by one."""

from __future__ import annotations

import ast

from planner.model.definitions import merged_definitions
from planner.model.file_blocks import written_files

PAGER = '''"""Pages."""
import math


def page(items: list[object], number: int, size: int) -> list[object]:
    start = (number - 1) * size
    return items[start : start + size + 1]


@staticmethod
def page_count(items: list[object], size: int) -> int:
    return math.ceil(len(items) / size)
'''

STACK = '''class Stack:
    """Last in, first out."""

    def __init__(self) -> None:
        self._items: list[object] = []

    def push(self, item: object) -> None:
        self._items.append(item)

    def pop(self) -> object:
        return self._items.pop()
'''


def test_a_function_the_file_defines_is_replaced_and_the_rest_kept() -> None:
    block = "def page(items, number, size):\n    return items[(number - 1) * size :][:size]\n"
    merged = merged_definitions(PAGER, block)
    assert merged is not None
    assert merged == PAGER.replace(
        "def page(items: list[object], number: int, size: int) -> list[object]:\n"
        "    start = (number - 1) * size\n    return items[start : start + size + 1]\n",
        block,
    )


def test_a_decorated_function_is_replaced_with_its_decorators() -> None:
    block = "def page_count(items, size):\n    return -(-len(items) // size)\n"
    merged = merged_definitions(PAGER, block)
    assert merged is not None
    assert "@staticmethod" not in merged
    assert merged.endswith(block)


def test_a_new_function_is_added_at_the_end_and_a_new_import_after_the_imports() -> None:
    block = "import statistics\n\n\ndef middle(values):\n    return statistics.median(values)\n"
    merged = merged_definitions(PAGER, block)
    assert merged is not None
    assert merged.startswith('"""Pages."""\nimport math\nimport statistics\n\n\ndef page(')
    assert merged.endswith(PAGER.splitlines()[-1] + "\n\n\n" + block.split("\n\n\n")[1])
    ast.parse(merged)


def test_methods_are_put_into_the_class_one_by_one_at_its_indentation() -> None:
    block = (
        "class Stack:\n"
        "  def pop(self) -> object:\n    return self._items.pop(-1)\n"
        "  def peek(self) -> object:\n    return self._items[-1]\n"
    )
    merged = merged_definitions(STACK, block)
    assert merged is not None
    tree = ast.parse(merged)
    stack = tree.body[0]
    assert isinstance(stack, ast.ClassDef)
    names = [m.name for m in stack.body if isinstance(m, ast.FunctionDef)]
    assert names == ["__init__", "push", "pop", "peek"]
    assert "    def peek(self) -> object:\n" in merged
    assert "pop(-1)" in merged and '"""Last in, first out."""' in merged


def test_a_class_with_more_than_methods_replaces_the_class_whole() -> None:
    block = "class Stack:\n    limit = 3\n\n    def peek(self):\n        return None\n"
    merged = merged_definitions(STACK, block)
    assert merged is not None
    assert merged == block


def test_statements_or_text_that_does_not_parse_are_not_merged() -> None:
    assert merged_definitions(PAGER, "x = 1\n\n\ndef page():\n    return x\n") is None
    assert merged_definitions(PAGER, "    return items[:size]\n") is None
    assert merged_definitions(PAGER, "import os\n") is None  # no definition at all
    assert merged_definitions("def broken(:\n", "def page():\n    return 1\n") is None


def test_a_method_written_alone_outside_its_class_replaces_that_method() -> None:
    """Shown LRUCache's methods as a window, the 1.5B answered with `def __update(self, key)`
    alone; added at the file's end it would change nothing the class runs."""
    block = "def pop(self) -> object:\n    return self._items.pop(0)\n"
    merged = merged_definitions(STACK, block)
    assert merged == STACK.replace(
        "    def pop(self) -> object:\n        return self._items.pop()\n",
        "    def pop(self) -> object:\n        return self._items.pop(0)\n",
    )
    ast.parse(merged)


def test_a_method_two_classes_have_or_a_function_without_self_is_added_not_guessed() -> None:
    two = STACK + "\n\nclass Queue:\n    def pop(self) -> object:\n        return None\n"
    block = "def pop(self) -> object:\n    return 1\n"
    merged = merged_definitions(two, block)
    assert merged is not None and merged.endswith("\n\ndef pop(self) -> object:\n    return 1\n")
    plain = merged_definitions(STACK, "def pop(items):\n    return items[-1]\n")
    assert plain is not None and plain.endswith("\n\ndef pop(items):\n    return items[-1]\n")


def test_a_reply_with_a_method_alone_is_applied_to_the_one_file_shown_as_windows() -> None:
    reply = (
        "Here's the updated code for `pop` in `Stack`:\n\n"
        "```python\ndef pop(self) -> object:\n    return self._items.pop(0)\n```\n\n"
        "Let's run the tests to verify:\n\n```python\nrun_tests()\n```\n"
    )
    big = STACK + "".join(f"\n\ndef helper_{n}():\n    return {n}\n" for n in range(8))
    found = written_files(reply, set(), {"stack.py": big}.get, windows={"stack.py"})
    assert [path for path, _ in found.files] == ["stack.py"]
    assert "        return self._items.pop(0)\n" in found.files[0][1]
    assert found.parts == {"stack.py"}


def test_a_function_labelled_with_a_file_that_lacks_it_goes_to_the_window_defining_it() -> None:
    """Shown `typedkey` of keys.py as a window, the 1.5B wrote the function under the path of
    the other window, src/cachetools/__init__.py, which does not define it: it was refused
    ("the prompt did not show that file whole") and the next reply rewrote __init__.py."""
    keys = "".join(f"def helper_{n}():\n    return {n}\n\n\n" for n in range(30))
    keys += "def typedkey(*args):\n    return args\n"
    package = "".join(f"class C{n}:\n    pass\n\n\n" for n in range(30))
    files = {"src/pkg/keys.py": keys, "src/pkg/__init__.py": package}
    reply = (
        "src/pkg/__init__.py\n\n```python\ndef typedkey(*args):\n"
        "    return args + tuple(type(v) for v in args)\n```\n"
    )
    found = written_files(reply, set(), files.get, windows=set(files))
    assert [path for path, _ in found.files] == ["src/pkg/keys.py"] and not found.problems
    assert "    return args + tuple(type(v) for v in args)\n" in found.files[0][1]
    assert found.files[0][1].startswith("def helper_0():")
    # A function no window defines is still not written anywhere.
    stray = reply.replace("typedkey", "brand_new")
    assert written_files(stray, set(), files.get, windows=set(files)).files == []


DOCUMENTED = (
    "import os\n\n\ndef divide(n, items):\n"
    '    """Divide *items* into *n* parts.\n\n        >>> divide(2, [1, 2, 3])\n'
    '        [[1, 2], [3]]\n\n    The first parts are the longer ones.\n    """\n'
    "    q, r = divmod(len(items), n)\n    return [items[:q], items[q:]]\n\n\n"
    "class Parts:\n    def split(self, items):\n"
    '        """Split *items* in two."""\n        return items[:1], items[1:]\n'
)


def test_a_function_written_back_without_its_docstring_keeps_the_docstring() -> None:
    """The 1.5B answered with `divide` without its 29-line docstring (the package's doctests):
    the fix is the code; the docstring was left out, not deleted on purpose."""
    block = "def divide(n, items):\n    q, r = divmod(len(items), n)\n    return [items]\n"
    merged = merged_definitions(DOCUMENTED, block)
    assert merged == DOCUMENTED.replace(
        "    return [items[:q], items[q:]]\n", "    return [items]\n"
    )
    # A method alone, outside its class, keeps its docstring too.
    method = "def split(self, items):\n    return items[:2], items[2:]\n"
    merged = merged_definitions(DOCUMENTED, method)
    assert merged is not None
    assert '        """Split *items* in two."""\n        return items[:2], items[2:]\n' in merged
    in_class = "class Parts:\n    def split(self, items):\n        return items[:3], items[3:]\n"
    merged = merged_definitions(DOCUMENTED, in_class)
    assert merged is not None
    assert '        """Split *items* in two."""\n        return items[:3], items[3:]\n' in merged
    # A new version with a docstring of its own keeps that one.
    own = 'def divide(n, items):\n    """Split."""\n    return [items]\n'
    merged = merged_definitions(DOCUMENTED, own)
    assert merged is not None and '"""Split."""' in merged and "The first parts" not in merged
    ast.parse(merged)
