#!/usr/bin/env bash
# The test command: installs what it needs (scripts/setup.sh --torch), lints, checks formatting and types,
# then runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --torch   # the reference (sentence-transformers) tests and the local provider need torch
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy   # strict for stabilitygate/, with the pydantic plugin (pyproject.toml)
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
