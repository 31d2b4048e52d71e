import tomlkit


def test_every_line_of_a_comment_is_a_comment():
    doc = tomlkit.document()
    doc.add(tomlkit.comment("Generated file.\nDo not edit."))
    doc.add("name", "demo")
    text = tomlkit.dumps(doc)
    assert text == '# Generated file.\n# Do not edit.\nname = "demo"\n'
    assert tomlkit.parse(text) == {"name": "demo"}
    assert tomlkit.parse(text).as_string() == text


def test_a_one_line_comment_is_unchanged():
    doc = tomlkit.document()
    doc.add(tomlkit.comment("Generated file."))
    assert tomlkit.dumps(doc) == "# Generated file.\n"
