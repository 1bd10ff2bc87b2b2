# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test eval bench dist clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

## Install, then search the bundled example vault and say what to do next.
run: $(STAMP)
	@echo '$$ vaultlens search "how do I search my notes" --vault examples/vault --limit 5'
	@$(BIN)/vaultlens search "how do I search my notes" --vault examples/vault --limit 5
	@echo
	@echo '$$ vaultlens read "Graph RAG" --level 0 --vault examples/vault'
	@$(BIN)/vaultlens read "Graph RAG" --level 0 --vault examples/vault
	@echo
	@echo 'Next:'
	@echo '  search your own vault:  $(BIN)/vaultlens search "your words" --vault ~/path/to/vault'
	@echo '                          (--json for the explained result object; vaultlens --help for every command)'
	@echo '  put vaultlens on PATH:  export PATH="$(abspath $(BIN)):$$PATH"   (or: pipx install .)'
	@echo '  connect an editor:      README.md, "Editors" (VS Code, Neovim, Helix); agents: "Agents (MCP)"'

## Install, then run the whole test suite.
test: $(STAMP)
	$(BIN)/python -m pytest -q

## Known-item evaluation on the shared dev sets (needs ../shared).
eval: $(STAMP)
	$(BIN)/python ../shared/eval/run_eval.py --stdio '$(BIN)/vaultlens jsonl --vault {vault} --limit {limit}'

## Performance figures at 1,000 and 10,000 pages (needs ../shared/bench); BENCH_ARGS adds options,
## e.g. make bench BENCH_ARGS='--vs "node …/vscode-markdown-language-server --stdio" --runs 3'.
bench: $(STAMP)
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

## Build the wheel and the sdist into dist/ (python -m build in a venv of its own, .venv-build, so
## the project's .venv is not needed; build fetches setuptools for an isolated build).
BUILD_VENV := .venv-build
$(BUILD_VENV)/.installed:
	$(PYTHON) -m venv $(BUILD_VENV)
	$(BUILD_VENV)/bin/pip install -q build
	touch $@

dist: $(BUILD_VENV)/.installed
	rm -rf dist
	$(BUILD_VENV)/bin/python -m build --quiet --outdir dist .

clean:
	rm -rf $(VENV) $(BUILD_VENV) dist
