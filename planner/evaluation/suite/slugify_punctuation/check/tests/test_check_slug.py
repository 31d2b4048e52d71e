from slug import slugify


def test_punctuation_and_spaces_collapse_to_single_hyphens() -> None:
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Many   spaces  ") == "many-spaces"
    assert slugify("C++ & Rust: 2 languages") == "c-rust-2-languages"
