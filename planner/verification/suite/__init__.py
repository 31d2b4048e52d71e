"""Running the repository's tests: finding how (detect, declared), choosing which (selection,
changes), running them (runner), reading their output (parse), checking without tests (checks)."""
