#!/usr/bin/env bash
# The container smoke test: build the Action's image and run it exactly as the GitHub runner runs a
# Docker action, against a scripted OpenAI-compatible server and a fake GitHub API on this host.
#
# Checks: the exit code the gate decides, the report, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, the
# annotation at the failing case's line, the sticky PR comment, secrets only in ::add-mask::, the
# baked-in embedding model used with every non-loopback connection refused, and every file the
# container wrote into the workspace owned by the workspace's owner (uid 1234), not root.
#
# Prints SKIPPED and exits 0 only when no Docker engine can run here.
# Environment: BASE_IMAGE (default python:3.11-slim, else a local Debian image when no registry
# answers), STABILITYGATE_IMAGE (tag, default llm-stability-gate:smoke), SMOKE_SKIP_BUILD=1 (reuse
# the image), TORCH_WHEEL_DIR (default /opt/wheels: a local torch CPU wheel replaces the PyTorch index).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
IMAGE="${STABILITYGATE_IMAGE:-llm-stability-gate:smoke}"
PY="${PYTHON:-python3}"
OWNER_UID=1234
OWNER_GID=1234
TOKEN="ghs_smokeTOKEN_$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
API_KEY="sk-smokeKEY-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

say() { echo "== $*"; }
fail() {
  echo "SMOKE TEST FAILED: $*" >&2
  exit 1
}

# ---- 1. an engine, or skip
if ! reason="$(scripts/docker_engine.sh 2>&1)"; then
  echo "SKIPPED: no Docker engine can run here: ${reason##*$'\n'}"
  exit 0
fi

WORK="$(mktemp -d /tmp/stabilitygate-smoke.XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  $SUDO rm -rf "$WORK"
}
trap cleanup EXIT

# ---- 2. the image
if [ "${SMOKE_SKIP_BUILD:-0}" = 1 ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  say "reusing $IMAGE"
else
  BUILD_ARGS=()
  BASE="${BASE_IMAGE:-python:3.11-slim}"
  if ! docker image inspect "$BASE" >/dev/null 2>&1 && ! timeout 120 docker pull -q "$BASE" >/dev/null 2>&1; then
    if [ -n "${BASE_IMAGE:-}" ]; then fail "the base image $BASE cannot be found or pulled"; fi
    say "no registry answers: building a local Debian bookworm base image"
    scripts/local_base_image.sh local/bookworm-base
    BASE=local/bookworm-base
    # The local base carries this host's CA bundle (a TLS-intercepting proxy): make pip use it.
    BUILD_ARGS+=(--build-arg PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
  fi
  BUILD_ARGS+=(--build-arg "BASE_IMAGE=$BASE")
  CONTEXT="$WORK/context"
  mkdir -p "$CONTEXT"
  # A clean context: the files the image needs, never the .venv or caches of this checkout.
  FILES=(pyproject.toml README.md entrypoint.py stabilitygate Dockerfile .dockerignore)
  if [ -e LICENSE ]; then FILES+=(LICENSE); fi
  tar -C "$REPO" --exclude=__pycache__ -c "${FILES[@]}" | tar -C "$CONTEXT" -x
  WHEELS="${TORCH_WHEEL_DIR:-/opt/wheels}"
  if compgen -G "$WHEELS/torch-2.13.0+cpu-*.whl" >/dev/null; then
    mkdir -p "$CONTEXT/wheels"
    cp "$WHEELS"/torch-2.13.0+cpu-*.whl "$CONTEXT/wheels/"
    BUILD_ARGS+=(--build-arg PIP_FIND_LINKS=/wheels)
  fi
  for var in HTTP_PROXY HTTPS_PROXY NO_PROXY http_proxy https_proxy no_proxy; do
    if [ -n "${!var:-}" ]; then BUILD_ARGS+=(--build-arg "$var"); fi
  done
  say "building $IMAGE from $BASE"
  started=$(date +%s)
  docker build --network host -t "$IMAGE" "${BUILD_ARGS[@]}" "$CONTEXT"
  say "built in $(( $(date +%s) - started )) s"
fi
docker image ls "$IMAGE"

# ---- 3. the servers: a scripted model and a fake GitHub API with 120 comments on PR 7
cat >"$WORK/script.json" <<JSON
{
  "completions": {
    "What is 2 + 2? Reply with the number only.": [["4", 1]],
    "Name one primary colour.": [["Red", 1], ["Blue", 1]]
  },
  "api_key": "$API_KEY"
}
JSON
start_server() { # NAME MODULE ARGS...: in the background, from this shell so that cleanup can end it
  local name="$1"
  shift
  "$PY" -m "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  PIDS+=($!)
}
server_url() { # NAME -> the URL the server printed first
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
start_server model tests.support.openai_server --host 127.0.0.1 --port 0 --script "$WORK/script.json"
start_server github tests.support.github_server --host 127.0.0.1 --port 0 --token "$TOKEN" --pr 7 --existing 120
MODEL_URL="$(server_url model)"
API_URL="$(server_url github)"
say "model at $MODEL_URL, GitHub API at $API_URL"

# ---- 4. a workspace owned by someone else than root, as on a runner
WS="$WORK/ws"
RUNNER_TEMP_DIR="$WORK/runner_temp"
mkdir -p "$WS/.stability" "$RUNNER_TEMP_DIR/_github_workflow" "$RUNNER_TEMP_DIR/_runner_file_commands" \
  "$RUNNER_TEMP_DIR/_github_home"
cat >"$WS/.stability/suite.yml" <<YAML
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
WOBBLY_LINE="$(grep -n -- '- id: wobbly' "$WS/.stability/suite.yml" | cut -d: -f1)"
echo '{"action": "synchronize", "number": 7, "pull_request": {"number": 7}}' \
  >"$RUNNER_TEMP_DIR/_github_workflow/event.json"
$SUDO chown -R "$OWNER_UID:$OWNER_GID" "$WS"

run_action() { # NAME [extra docker args...] -> sets RC; output in $WORK/NAME.log
  local name="$1"
  shift
  local commands="$RUNNER_TEMP_DIR/_runner_file_commands"
  : >"$commands/set_output_$name"
  : >"$commands/step_summary_$name"
  set +e
  # What the runner passes to a container action, plus a dead proxy for everything but loopback:
  # a download attempt of any model would fail the run.
  docker run --rm --network host \
    --workdir /github/workspace \
    -v "$WS":/github/workspace \
    -v "$RUNNER_TEMP_DIR/_github_workflow":/github/workflow \
    -v "$commands":/github/file_commands \
    -v "$RUNNER_TEMP_DIR/_github_home":/github/home \
    -e HOME=/github/home -e CI=true -e GITHUB_ACTIONS=true \
    -e GITHUB_WORKSPACE=/github/workspace \
    -e GITHUB_EVENT_NAME=pull_request -e GITHUB_EVENT_PATH=/github/workflow/event.json \
    -e GITHUB_REPOSITORY=acme/widgets -e GITHUB_API_URL="$API_URL" \
    -e GITHUB_OUTPUT="/github/file_commands/set_output_$name" \
    -e GITHUB_STEP_SUMMARY="/github/file_commands/step_summary_$name" \
    -e RUNNER_TEMP=/home/runner/work/_temp \
    -e INPUT_SUITE=.stability/suite.yml -e INPUT_BASELINE= -e INPUT_SAMPLES= \
    -e "INPUT_GITHUB-TOKEN=$TOKEN" -e INPUT_FAIL-ON=regression -e INPUT_WORKING-DIRECTORY= \
    -e SMOKE_API_KEY="$API_KEY" \
    -e HTTPS_PROXY=http://127.0.0.1:9 -e HTTP_PROXY=http://127.0.0.1:9 -e NO_PROXY=127.0.0.1,localhost \
    "$@" "$IMAGE" >"$WORK/$name.log" 2>&1
  RC=$?
  set -e
  cat "$WORK/$name.log"
}

# ---- 5. a pull-request run: one case fails its threshold -> exit 1, annotated, commented
say "run 1: pull request, gate fails"
started=$(date +%s)
run_action pr -e INPUT_UPDATE-BASELINE=false -e INPUT_COMMENT=true
say "run 1 took $(( $(date +%s) - started )) s, exit code $RC"
[ "$RC" = 1 ] || fail "run 1: expected exit code 1 (a case fails max_unique), got $RC"

# ---- 6. a baseline run: update-baseline -> exit 0 and the baseline written, no comment
say "run 2: update-baseline"
run_action baseline -e INPUT_UPDATE-BASELINE=true -e INPUT_COMMENT=false
[ "$RC" = 0 ] || fail "run 2: expected exit code 0 (update-baseline), got $RC"

# ---- 7. what the runs left behind
$SUDO "$PY" - "$WORK" "$OWNER_UID" "$OWNER_GID" "$WOBBLY_LINE" "$TOKEN" "$API_KEY" "$API_URL" <<'PYCHECK'
import json, os, re, sys, urllib.request
work, uid, gid, line, token, api_key, api_url = sys.argv[1:]
ws = os.path.join(work, "ws")
commands = os.path.join(work, "runner_temp", "_runner_file_commands")
problems = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        problems.append(what)

def outputs(path):
    found, lines, i = {}, open(path, encoding="utf-8").read().split("\n"), 0
    while i < len(lines) and lines[i]:
        name, _, delim = lines[i].partition("<<")
        end = lines.index(delim, i + 1)
        found[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return found

report = json.load(open(os.path.join(ws, ".stabilitygate", "report.json"), encoding="utf-8"))
# update-baseline records the run and exits 0 whatever the verdict (the failing case stays "fail").
check(report["exit_code"] == 0 and report["run"]["baseline"]["status"] == "updated",
      "run 2 report: exit_code 0, baseline updated")
out_pr = outputs(os.path.join(commands, "set_output_pr"))
check(out_pr.get("verdict") == "fail", f"run 1 output verdict=fail ({out_pr.get('verdict')!r})")
check(out_pr.get("failed-cases") == "wobbly", f"run 1 output failed-cases=wobbly ({out_pr.get('failed-cases')!r})")
check(out_pr.get("report-json") == ".stabilitygate/report.json", "run 1 output report-json")
check(out_pr.get("report-markdown") == ".stabilitygate/report.md", "run 1 output report-markdown")
out_base = outputs(os.path.join(commands, "set_output_baseline"))
check(out_base.get("verdict") == report["verdict"] and out_base.get("failed-cases") == "wobbly",
      "run 2 outputs: the report's verdict and failed cases")
summary = open(os.path.join(commands, "step_summary_pr"), encoding="utf-8").read()
check(summary.startswith("<!-- stabilitygate:smoke -->"), "run 1 step summary is the Markdown report")
check("wobbly" in summary, "run 1 step summary names the failing case")
log = open(os.path.join(work, "pr.log"), encoding="utf-8").read()
check(re.search(rf"^::error file=\.stability/suite\.yml,line={line},title=[^:]*wobbly[^:]*::", log, re.M) is not None,
      f"run 1 annotation at .stability/suite.yml line {line}")
check("Traceback" not in log, "run 1 log has no traceback")
for name in ("pr.log", "baseline.log"):
    text = open(os.path.join(work, name), encoding="utf-8").read()
    leaks = [l for l in text.splitlines() if (token in l or api_key in l) and not l.startswith("::add-mask::")]
    check(not leaks, f"{name}: secrets only in ::add-mask:: lines")
leaked = []
for base in (ws, commands):
    for root, dirs, files in os.walk(base):
        for entry in files:
            data = open(os.path.join(root, entry), "rb").read()
            if token.encode() in data or api_key.encode() in data:
                leaked.append(os.path.join(root, entry))
check(not leaked, f"no secret in any file of the workspace or the runner's file commands {leaked}")
wrong = []
for root, dirs, files in os.walk(ws):
    for entry in [root] + [os.path.join(root, e) for e in dirs + files]:
        st = os.lstat(entry)
        if (st.st_uid, st.st_gid) != (int(uid), int(gid)):
            wrong.append(f"{os.path.relpath(entry, ws)} {st.st_uid}:{st.st_gid}")
check(not wrong, f"every workspace file owned by {uid}:{gid} {wrong[:5]}")
check(os.path.isfile(os.path.join(ws, ".stability", "suite.baseline.json")), "run 2 wrote the baseline")
state = json.load(urllib.request.urlopen(api_url + "/_state", timeout=10))
ours = [c for c in state["comments"] if c["body"].startswith("<!-- stabilitygate:smoke -->")]
check(len(state["comments"]) == 121 and len(ours) == 1, f"one sticky comment created ({len(ours)} of {len(state['comments'])})")
auths = {r["authorization"] for r in state["requests"]}
check(auths == {f"Bearer {token}"}, "the GitHub API saw only the token, as a Bearer")
if problems:
    sys.exit(f"{len(problems)} checks failed")
PYCHECK
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$IMAGE"
say "container smoke test passed"
