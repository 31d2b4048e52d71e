from tabulate import tabulate


def test_numbers_are_marked_right_aligned():
    out = tabulate([["a", 1], ["bb", 22]], headers=["name", "n"], tablefmt="pipe")
    assert out.splitlines()[1] == "|:-------|----:|"


def test_other_alignments_keep_their_markers():
    out = tabulate([["a", "b", 1.5]], headers=["x", "y", "z"], tablefmt="pipe", colalign=("left", "center", "decimal"))
    assert out.splitlines()[1] == "|:----|:---:|----:|"
