"""Line diffs on large files (planner/text/line_diff.py): exact as difflib's while small, and
on large texts still a true diff that rebuilds the new text and keeps small edits small.

Its speed is measured in benchmarks/bench_approval.py, not here."""

from __future__ import annotations

import difflib
import random

import pytest

from planner.text.line_diff import EXACT_CELLS, kept_lines, line_opcodes
from planner.tools.files.destructive import destructive_change, line_change


def rebuilt(old: list[str], new: list[str]) -> list[str]:
    """`new` made from `old` by the opcodes; every equal run must really be equal."""
    out: list[str] = []
    i_at = j_at = 0
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        assert (i1, j1) == (i_at, j_at), "opcodes must cover both texts in order"
        if tag == "equal":
            assert old[i1:i2] == new[j1:j2]
            out.extend(old[i1:i2])
        else:
            out.extend(new[j1:j2])
        i_at, j_at = i2, j2
    assert (i_at, j_at) == (len(old), len(new))
    return out


def module(functions: int) -> list[str]:
    """Code where blank lines and `return total` repeat in every function."""
    lines: list[str] = []
    for n in range(functions):
        lines += [f"def helper_{n}(values):", "    total = 0", "    for value in values:"]
        lines += [f"        total += value * {n}", "", "    return total", "", ""]
    return lines


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["a", "b", "c"], ["a", "x", "c"]),
        (["a", "b"], ["a", "a", "b"]),
        (["", "", "x", ""], ["x", "", ""]),
        ([], ["new"]),
        (["gone"], []),
        (module(20), [*module(20)[:50], "    return None", *module(20)[60:]]),
    ],
)
def test_small_texts_get_exactly_the_opcodes_difflib_gives(old: list[str], new: list[str]) -> None:
    assert len(old) * len(new) <= EXACT_CELLS
    exact = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    assert line_opcodes(old, new) == exact


def test_a_module_written_over_with_other_content_is_one_replacement() -> None:
    old = module(400)  # 3,200 lines
    new = [line for n in range(1000) for line in (f"def other_{n}():", f"    return {n}", "", "")]
    assert len(old) * len(new) > EXACT_CELLS
    assert rebuilt(old, new) == new
    change = line_change("\n".join(old), "\n".join(new))
    # Only blank lines may be kept: every line of code of the old module is deleted.
    assert {text for _, text in change.deleted if text} == {line for line in old if line}


@pytest.mark.parametrize("seed", range(5))
def test_scattered_edits_in_a_large_file_stay_the_lines_edited(seed: int) -> None:
    old = module(500)  # 4,000 lines
    new = list(old)
    chooser = random.Random(seed)
    edited = sorted(chooser.sample(range(3, len(old), 8), 6))  # `total = 0` lines
    for at in edited:
        new[at] = f"    total = {at}"
    assert rebuilt(old, new) == new
    changes = [code for code in line_opcodes(old, new) if code[0] != "equal"]
    assert [(tag, i1, i2) for tag, i1, i2, _, _ in changes] == [
        ("replace", at, at + 1) for at in edited
    ]
    assert kept_lines(old, new) == len(old) - len(edited)


def test_a_large_file_with_a_block_moved_to_its_end_is_rebuilt() -> None:
    old = module(450)
    new = old[:1000] + old[1400:] + old[1000:1400]
    assert rebuilt(old, new) == new
    assert kept_lines(old, new) >= len(old) - 400


def test_a_large_module_cut_to_its_first_lines_is_still_refused_as_a_mass_deletion() -> None:
    before = "\n".join(module(400)) + "\n"
    after = "\n".join(module(400)[:30]) + "\n"
    refusal = destructive_change("stats/core.py", before, after, whole=True)
    assert refusal is not None and "deletes 3170 lines" in refusal
