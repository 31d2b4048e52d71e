# Every target delegates to scripts/dev.py so CI, the README and developers run the same thing.
PY ?= python3
TARGETS := demo test lint format bench docs

.PHONY: $(TARGETS) check
$(TARGETS):
	$(PY) scripts/dev.py $@
check: lint test
