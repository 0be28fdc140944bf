#!/usr/bin/env bash
# The main job on the embedded default: sample the bundled example suite on SmolLM2-135M-Instruct
# (in-process, on the CPU, no API key, no network) and print the result.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --torch   # the embedded model runs on torch (the local provider)
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
mkdir -p out
set +e
.venv/bin/stabilitygate run examples/suite.yml --baseline out/example.baseline.json \
  --report-json out/report.json --markdown out/report.md --junit out/junit.xml \
  --samples-out out/samples.jsonl "$@"
code=$?
set -e
cat out/report.md
echo
echo "exit code: $code (report: out/report.json, comment: out/report.md, samples: out/samples.jsonl)"
.venv/bin/python scripts/example_summary.py out/report.json "$code"   # which failure is meant, what next
