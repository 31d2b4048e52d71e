from tabulate import tabulate


def test_intfmt_formats_integer_columns():
    out = tabulate([["apples", 1234567, 2.5]], intfmt=",")
    assert "1,234,567" in out
    assert "2.5" in out


def test_intfmt_per_column_and_default():
    out = tabulate([[1000, 2000]], intfmt=[",", ""], tablefmt="plain")
    assert out.split() == ["1,000", "2000"]
    assert tabulate([[1000]], tablefmt="plain").strip() == "1000"
