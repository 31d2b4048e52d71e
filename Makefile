# Every target delegates to scripts/dev.py so CI, the README and developers run the same thing.
PY ?= python3

.PHONY: demo test lint format bench docs check
demo:
	$(PY) scripts/dev.py demo
test:
	$(PY) scripts/dev.py test
lint:
	$(PY) scripts/dev.py lint
format:
	$(PY) scripts/dev.py format
bench:
	$(PY) scripts/dev.py bench
docs:
	$(PY) scripts/dev.py docs
check: lint test
