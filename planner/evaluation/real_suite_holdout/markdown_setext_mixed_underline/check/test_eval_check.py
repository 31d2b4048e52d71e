import markdown


def test_a_mixed_underline_is_not_a_heading():
    assert markdown.markdown("Total\n=-=-=") == "<p>Total\n=-=-=</p>"
    assert markdown.markdown("Notes\n-=-") == "<p>Notes\n-=-</p>"


def test_plain_underlines_are_still_headings():
    assert markdown.markdown("Title\n=====") == "<h1>Title</h1>"
    assert markdown.markdown("Title\n-----") == "<h2>Title</h2>"
    assert markdown.markdown("Title\n===  \n\nText") == "<h1>Title</h1>\n<p>Text</p>"
