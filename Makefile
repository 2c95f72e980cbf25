# Two commands: `make run` and `make test`. Everything else is a helper of theirs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test install clean bench package deploy

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The editable install maps the packages that exist when it runs: a new function re-installs.
$(STAMP): pyproject.toml $(wildcard functions/*/*/__init__.py) | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/groundchat serve

test: $(STAMP)
	$(BIN)/python -m pytest -q -ra; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .groundchat build *.egg-info
