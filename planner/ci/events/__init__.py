"""Events read into a Trigger, or a Skip saying why not: pure parsing, no API calls."""
