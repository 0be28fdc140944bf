# shellcheck shell=bash
# shellcheck disable=SC2034 # the variables set here are for the scripts that source this file
# What the two runner-shaped smoke tests share (sourced, not run): scripts/container_smoke_test.sh
# runs the image as actions/runner does, scripts/act_smoke_test.sh runs a workflow through nektos/act.
#
# The caller sets WORK (a scratch directory) and PIDS (an array that its EXIT trap ends) before
# calling anything here, and runs from the repository root.
# Environment: BASE_IMAGE, STABILITYGATE_IMAGE, SMOKE_SKIP_BUILD, TORCH_WHEEL_DIR (see build_image).

IMAGE="${STABILITYGATE_IMAGE:-llm-stability-gate:smoke}"
if [ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; fi
PY="${PYTHON:-python3}"

say() { echo "== $*"; }
fail() {
  echo "SMOKE TEST FAILED: $*" >&2
  exit 1
}

# Exit 0 with SKIPPED when no engine can run here; otherwise return.
require_engine_or_skip() {
  local reason
  if ! reason="$(scripts/docker_engine.sh 2>&1)"; then
    echo "SKIPPED: no Docker engine can run here: ${reason##*$'\n'}"
    exit 0
  fi
}

# Build $IMAGE from a clean context (reused when SMOKE_SKIP_BUILD=1 and it exists).
# BASE_IMAGE (default python:3.11-slim, else a local Debian image when no registry answers),
# TORCH_WHEEL_DIR (default /opt/wheels: a local torch CPU wheel replaces the PyTorch index).
build_image() {
  if [ "${SMOKE_SKIP_BUILD:-0}" = 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
    say "reusing $IMAGE"
    return 0
  fi
  local build_args=() base="${BASE_IMAGE:-python:3.11-slim}"
  if ! docker image inspect "$base" >/dev/null 2>&1 && ! timeout 120 docker pull -q "$base" >/dev/null 2>&1; then
    if [ -n "${BASE_IMAGE:-}" ]; then fail "the base image $base cannot be found or pulled"; fi
    say "no registry answers: building a local Debian bookworm base image"
    scripts/local_base_image.sh local/bookworm-base
    base=local/bookworm-base
    # The local base carries this host's CA bundle (a TLS-intercepting proxy): make pip use it.
    build_args+=(--build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  fi
  build_args+=(--build-arg "BASE_IMAGE=$base")
  local context="$WORK/context"
  mkdir -p "$context"
  # A clean context: the files the image needs, never the .venv or caches of this checkout.
  local files=(pyproject.toml README.md entrypoint.py stabilitygate scripts/build_wheel.py Dockerfile .dockerignore)
  if [ -e LICENSE ]; then files+=(LICENSE); fi
  tar --exclude=__pycache__ -c "${files[@]}" | tar -C "$context" -x
  local wheels="${TORCH_WHEEL_DIR:-/opt/wheels}"
  if compgen -G "$wheels/torch-2.13.0+cpu-*.whl" >/dev/null; then
    mkdir -p "$context/wheels"
    cp "$wheels"/torch-2.13.0+cpu-*.whl "$context/wheels/"
    build_args+=(--build-arg PIP_FIND_LINKS=/wheels)
  fi
  local var
  for var in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    if [ -n "${!var:-}" ]; then build_args+=(--build-arg "$var"); fi
  done
  say "building $IMAGE from $base"
  local started
  started=$(date +%s)
  docker build --network host -t "$IMAGE" "${build_args[@]}" "$context"
  say "built in $(($(date +%s) - started)) s"
}

# The runner starts the Action's container with no --network when the job has no `container:` or
# `services:` (the engine's default bridge), else with --network github_network_<id>, a bridge it
# creates for the job. Either way the host is the bridge's gateway and 127.0.0.1 is the container
# itself (no --add-host, so no host.docker.internal). Sets JOB_NETWORK ("" for the default bridge)
# and HOST_ADDR (where the servers listen, as the container reaches them); the caller's EXIT trap
# calls remove_network.
choose_network() {
  CREATED_NETWORK=""
  if docker network inspect bridge >/dev/null 2>&1; then
    JOB_NETWORK=""
    HOST_ADDR="$(network_gateway bridge)"
    say "network: the default bridge, as on the runner; the servers listen on its gateway $HOST_ADDR"
  elif JOB_NETWORK="github_network_$(random_hex)" &&
    docker network create --label stabilitygate-smoke "$JOB_NETWORK" >/dev/null 2>&1; then
    CREATED_NETWORK="$JOB_NETWORK"
    HOST_ADDR="$(network_gateway "$JOB_NETWORK")"
    echo "NOTE: this engine has no default bridge (dockerd --bridge=none), so the container joins a bridge" \
      "network made for the job, --network $JOB_NETWORK, as the runner does for a job with services:;" \
      "the servers listen on its gateway $HOST_ADDR"
  else
    JOB_NETWORK=host
    HOST_ADDR=127.0.0.1
    echo "NOTE: this engine cannot make a bridge network, so the container runs with --network host" \
      "instead of the runner's bridge; that is the only flag that differs from the runner"
  fi
}

network_gateway() { # NETWORK -> its gateway address
  local gateway
  gateway="$(docker network inspect "$1" --format '{{range .IPAM.Config}}{{.Gateway}} {{end}}' | awk '{print $1}')"
  [ -n "$gateway" ] || fail "the network $1 has no gateway"
  echo "$gateway"
}

remove_network() {
  if [ -n "${CREATED_NETWORK:-}" ]; then docker network rm "$CREATED_NETWORK" >/dev/null 2>&1 || true; fi
}

start_server() { # NAME MODULE ARGS...: in the background, from this shell so that its EXIT trap can end it
  local name="$1"
  shift
  "$PY" -m "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
}

server_url() { # NAME -> the URL the server printed first
  local _
  for _ in $(seq 1 100); do
    if [ -s "$WORK/$1.out" ]; then
      head -n 1 "$WORK/$1.out"
      return 0
    fi
    sleep 0.1
  done
  cat "$WORK/$1.err" >&2
  fail "$1 did not start"
}

# The scripted model (two cases: one steady, one that fails max_unique) and a GitHub-shaped API
# with 120 comments on PR 7, both on HOST_ADDR. Sets MODEL_URL and API_URL; needs TOKEN and API_KEY.
start_servers() {
  cat >"$WORK/script.json" <<JSON
{
  "completions": {
    "What is 2 + 2? Reply with the number only.": [["4", 1]],
    "Name one primary colour.": [["Red", 1], ["Blue", 1]]
  },
  "api_key": "$API_KEY"
}
JSON
  start_server model tests.support.openai_server --host "$HOST_ADDR" --port 0 --script "$WORK/script.json"
  start_server github tests.support.github_server --host "$HOST_ADDR" --port 0 --token "$TOKEN" --pr 7 --existing 120
  MODEL_URL="$(server_url model)"
  API_URL="$(server_url github)"
  say "model at $MODEL_URL, GitHub API at $API_URL"
}

# The suite both smoke tests run, at $1/.stability/suite.yml; sets WOBBLY_LINE.
write_suite() {
  mkdir -p "$1/.stability"
  cat >"$1/.stability/suite.yml" <<YAML
version: 1
name: smoke
provider:
  type: openai
  model: scripted-model
  base_url: $MODEL_URL
  api_key_env: SMOKE_API_KEY
  params: {temperature: 0}
sampling: {samples: 6, concurrency: 3, timeout_s: 20, retries: 2, max_retry_wait_s: 0.2}
cases:
  - id: steady
    prompt: "What is 2 + 2? Reply with the number only."
    answer: {number: true}
  - id: wobbly
    prompt: "Name one primary colour."
    thresholds: {max_unique: 1}
YAML
  WOBBLY_LINE="$(grep -n -- '- id: wobbly' "$1/.stability/suite.yml" | cut -d: -f1)"
}

random_hex() { head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
