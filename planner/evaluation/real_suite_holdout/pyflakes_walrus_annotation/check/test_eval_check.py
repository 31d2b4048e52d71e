import ast
import textwrap

from pyflakes import checker, messages


def _messages(source):
    tree = ast.parse(textwrap.dedent(source))
    return [type(m) for m in checker.Checker(tree).messages]


def test_an_annotated_name_assigned_by_an_assignment_expression_is_defined():
    assert _messages("""
        def first_match(lines):
            match: str | None
            if (match := find(lines)) is not None:
                print(match)
            return match


        def find(lines):
            return lines[0] if lines else None
    """) == []
    assert _messages("""
        a: int
        print(a := 3)
        print(a)
    """) == []


def test_an_annotation_alone_still_does_not_define_the_name():
    assert _messages("""
        def f():
            a: int
            return a
    """) == [messages.UndefinedName]
