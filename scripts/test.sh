#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then lint and run the whole suite.
# Usage: bash scripts/test.sh [--e2e] [pytest args]   (as root, or with promtool already installed)
#   The fast suite always runs. The e2e tier (tests/e2e: a real CPU vLLM server and Prometheus) runs after it
#   when scripts/setup-e2e.sh has set it up; --e2e runs that set-up first and makes a missing piece an error.
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode caching on: without it every test worker compiles every module again (some sandboxes turn it off).
unset PYTHONDONTWRITEBYTECODE

e2e=auto
if [ "${1:-}" = "--e2e" ]; then
  e2e=required
  shift
fi

if ! command -v promtool >/dev/null 2>&1; then
  # promtool checks and unit-tests the alert rules; Debian ships it in the prometheus package.
  if [ "$(id -u)" = 0 ]; then
    echo "==> installing promtool (apt-get install prometheus; about a minute on a fresh machine)..." >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "promtool is missing: install it with 'sudo apt-get install prometheus' (Debian/Ubuntu)" >&2
    exit 1
  fi
fi

echo "==> creating venv/ and installing requirements-dev.txt (pip; a minute or two the first time)..." >&2
python3 -m venv venv
venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
echo "==> lint (ruff), workflow audit (zizmor), types (mypy), layer contract (lint-imports)..." >&2
venv/bin/ruff check .
venv/bin/ruff format --check .
# GitHub Actions audit (actions pinned by commit, least permissions, no persisted credentials); offline: no API calls.
venv/bin/zizmor --offline .github/workflows/
venv/bin/mypy .  # pydantic plugin and settings in pyproject.toml
venv/bin/lint-imports  # the layer contract: no import upward, no cycle (pyproject.toml [tool.importlinter])
echo "==> the fast suite (pytest; skips print their reason and how to enable the test)..." >&2
venv/bin/python -m pytest "$@"

if [ "$e2e" = required ]; then
  echo "==> setting up the e2e tier (scripts/setup-e2e.sh: a CPU vLLM server and Prometheus; several minutes)..." >&2
  bash scripts/setup-e2e.sh
  VLLM_SERVING_REQUIRE_E2E=1 venv/bin/python -m pytest -n 0 -m e2e tests/e2e
elif venv/bin/python -c "import sys; from tests.e2e.paths import missing_dependencies; sys.exit(bool(missing_dependencies()))"; then
  venv/bin/python -m pytest -n 0 -m e2e tests/e2e
else
  echo "e2e tier skipped: run 'bash scripts/setup-e2e.sh' once, or 'bash scripts/test.sh --e2e'" >&2
fi
