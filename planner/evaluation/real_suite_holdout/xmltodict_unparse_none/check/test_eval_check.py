from xmltodict import unparse


def test_none_text_and_attributes_are_empty():
    user = {"user": {"@id": "7", "@email": None, "#text": None}}
    assert unparse(user, full_document=False) == '<user id="7" email=""></user>'
    assert unparse(user, full_document=False, short_empty_elements=True) == '<user id="7" email=""/>'
    assert unparse({"a": {"#text": None}}, full_document=False) == unparse(
        {"a": None}, full_document=False
    )


def test_other_values_are_still_written():
    assert unparse({"a": {"@n": 0, "#text": False}}, full_document=False) == '<a n="0">false</a>'
    assert unparse({"a": {"@n": "None"}}, full_document=False) == '<a n="None"></a>'
