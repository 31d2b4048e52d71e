import humanize


def test_a_size_that_rounds_up_is_shown_in_the_next_unit():
    assert humanize.naturalsize(999_999) == "1.0 MB"
    assert humanize.naturalsize(1_048_575, binary=True) == "1.0 MiB"
    assert humanize.naturalsize(999_999_999) == "1.0 GB"
    assert humanize.naturalsize(-999_999) == "-1.0 MB"


def test_sizes_below_the_boundary_are_unchanged():
    assert humanize.naturalsize(1_000_000) == "1.0 MB"
    assert humanize.naturalsize(999_000) == "999.0 kB"
    assert humanize.naturalsize(999_949) == "999.9 kB"
    assert humanize.naturalsize(999_999, format="%.3f") == "999.999 kB"
