def slugify(title: str) -> str:
    """A URL slug for `title`."""
    return "-".join(title.lower().split())
