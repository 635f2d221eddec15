#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then lint and run the whole suite.
# Usage: bash scripts/test.sh   (as root, or with promtool already installed)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1; then
  # promtool checks and unit-tests the alert rules; Debian ships it in the prometheus package.
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "promtool is missing: install it with 'sudo apt-get install prometheus' (Debian/Ubuntu)" >&2
    exit 1
  fi
fi

python3 -m venv venv
venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt
venv/bin/ruff check .
# GitHub Actions audit (actions pinned by commit, least permissions, no persisted credentials); offline: no API calls.
venv/bin/zizmor --offline .github/workflows/
venv/bin/mypy .  # pydantic plugin and settings in pyproject.toml
venv/bin/python -m pytest "$@"
