def word_count(text: str) -> int:
    """How many words `text` holds."""
    return len(text.split())
