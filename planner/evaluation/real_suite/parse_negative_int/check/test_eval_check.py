import parse


def test_negative_integers_keep_their_sign():
    assert parse.parse("{:d} degrees", "-5 degrees")[0] == -5
    assert parse.parse("{t:d}", "-12")["t"] == -12
    assert parse.parse("{:x}", "-ff")[0] == -255


def test_positive_integers():
    assert parse.parse("{:d}", "+5")[0] == 5
    assert parse.parse("{:d}", "5")[0] == 5
