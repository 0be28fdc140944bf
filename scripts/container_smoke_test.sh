#!/usr/bin/env bash
# The container smoke test: build the Action's image and run it as the GitHub runner runs a Docker
# action, against a scripted OpenAI-compatible server and a fake GitHub API on this host.
#
# The `docker run` is the runner's, flag by flag: tests/support/runner_container.py builds it from
# action.yml (every declared input, defaults included) and from what actions/runner passes (the
# six mounts, /github/* paths, GITHUB_*/RUNNER_* variables, the file commands), and its test
# compares that list with the runner's source. The servers listen on the bridge's gateway, where
# the container reaches the host on a runner. Where the engine has no default bridge (dockerd
# --bridge=none), the script makes a bridge network for the job and passes --network
# github_network_<id>, as the runner does for a job with services:; where it cannot make one
# either, --network host, the one flag that then differs. It says which.
#
# Runs: a pull request (a case fails: exit 1); on a bridge, the same suite with a 127.0.0.1 model URL
# (exit 3: 127.0.0.1 is the container, as on a runner); update-baseline (exit 0); the fork-safe pair's
# part 2 on workflow_run: `comment-from` the first run's report.json (the gate renders and updates
# the sticky comment) and `comment-from` a file that is no report (exit 2, nothing posted).
# Checks: the exit codes, the report, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, the annotation at the
# failing case's line, the sticky PR comment, secrets only in ::add-mask::, the baked-in embedding
# model used with every other connection refused, and every file the container wrote into the
# workspace owned by the workspace's owner (uid 1234), not root.
#
# Prints SKIPPED and exits 0 only when no Docker engine can run here.
# Environment: BASE_IMAGE (default python:3.11-slim, else a local Debian image when no registry
# answers), STABILITYGATE_IMAGE (tag, default llm-stability-gate:smoke), SMOKE_SKIP_BUILD=1 (reuse
# the image), TORCH_WHEEL_DIR (default /opt/wheels: a local torch CPU wheel replaces the PyTorch index).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/smoke_lib.sh
. scripts/smoke_lib.sh
OWNER_UID=1234
OWNER_GID=1234
TOKEN="ghs_smokeTOKEN_$(random_hex)"
API_KEY="sk-smokeKEY-$(random_hex)"
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# ---- 1. an engine, or skip
require_engine_or_skip

WORK="$(mktemp -d /tmp/stabilitygate-smoke.XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  remove_network
  $SUDO rm -rf "$WORK"
}
trap cleanup EXIT

# ---- 2. the image
build_image
docker image ls "$IMAGE"

# ---- 3. the network and the servers: a scripted model and a fake GitHub API with 120 comments on PR 7
choose_network
start_servers

# ---- 4. a runner's directories: its temp directory, and a workspace owned by someone else than root
WS="$WORK/ws"
RUNNER_TEMP_DIR="$WORK/runner_temp"
mkdir -p "$WS" "$RUNNER_TEMP_DIR"
write_suite "$WS"
echo '{"action": "synchronize", "number": 7, "pull_request": {"number": 7}}' >"$WORK/event.json"
$SUDO chown -R "$OWNER_UID:$OWNER_GID" "$WS"
EVENT_NAME=pull_request

run_action() { # NAME [--input NAME=VALUE ...] -> sets RC; output in $WORK/NAME.log
  local name="$1"
  shift
  set +e
  # The step's env: the suite's key, and a dead proxy for everything but the model and the API:
  # a download attempt of any model would fail the run.
  "$PY" -m tests.support.runner_container --action action.yml --image "$IMAGE" \
    --temp "$RUNNER_TEMP_DIR" --workspace "$WS" --step "$name" --token "$TOKEN" \
    --event "$WORK/event.json" --event-name "$EVENT_NAME" --repository acme/widgets --api-url "$API_URL" \
    ${JOB_NETWORK:+--network "$JOB_NETWORK"} --log "$WORK/$name.log" \
    --input suite=.stability/suite.yml "$@" \
    --env SMOKE_API_KEY="$API_KEY" \
    --env HTTPS_PROXY=http://127.0.0.1:9 --env HTTP_PROXY=http://127.0.0.1:9 \
    --env NO_PROXY="$HOST_ADDR,127.0.0.1,localhost"
  RC=$?
  set -e
}

# ---- 5. a pull-request run: one case fails its threshold -> exit 1, annotated, commented
say "run 1: pull request, gate fails"
started=$(date +%s)
run_action pr --input update-baseline=false --input comment=true
say "run 1 took $(( $(date +%s) - started )) s, exit code $RC"
[ "$RC" = 1 ] || fail "run 1: expected exit code 1 (a case fails max_unique), got $RC"

# The fork-safe pair's artifact: run 1's report, as part 2 downloads it into its empty workspace.
MEASURED="$WS/measured"
$SUDO mkdir -p "$MEASURED"
$SUDO cp "$WS/.stabilitygate/report.json" "$MEASURED/report.json"
echo '{"not": "a report"}' | $SUDO tee "$MEASURED/bad.json" >/dev/null
$SUDO chown -R "$OWNER_UID:$OWNER_GID" "$MEASURED"

# ---- 5b. on a bridge, as on a runner, 127.0.0.1 is the container itself: a suite that points
# there cannot reach the model server on the host (exit 3), though the same URL works on the host
if [ "$JOB_NETWORK" != host ]; then
  sed -e "s#base_url: .*#base_url: ${MODEL_URL/$HOST_ADDR/127.0.0.1}#" -e 's#retries: 2#retries: 0#' \
    -e 's#^name: smoke#name: loopback#' "$WS/.stability/suite.yml" | $SUDO tee "$WS/.stability/loopback.yml" >/dev/null
  $SUDO chown "$OWNER_UID:$OWNER_GID" "$WS/.stability/loopback.yml"
  say "run 1b: a suite with a 127.0.0.1 model URL"
  run_action loopback --input suite=.stability/loopback.yml --input comment=false
  [ "$RC" = 3 ] || fail "run 1b: expected exit code 3 (the container cannot reach 127.0.0.1 of the host), got $RC"
fi

# ---- 6. a baseline run: update-baseline -> exit 0 and the baseline written, no comment
say "run 2: update-baseline"
run_action baseline --input update-baseline=true --input comment=false
[ "$RC" = 0 ] || fail "run 2: expected exit code 0 (update-baseline), got $RC"

# ---- 6b. the fork-safe part 2, as on workflow_run: comment from run 1's report, then from a bad one
EVENT_NAME=workflow_run
echo '{"action": "completed", "workflow_run": {"id": 1, "event": "pull_request", "pull_requests": []}}' \
  >"$WORK/event.json"
api_writes() { # how many POST, PATCH and DELETE requests the GitHub API has had
  "$PY" -c 'import json, sys, urllib.request
state = json.load(urllib.request.urlopen(sys.argv[1] + "/_state", timeout=10))
print(sum(r["method"] in ("POST", "PATCH", "DELETE") for r in state["requests"]))' "$API_URL"
}
WRITES_BEFORE="$(api_writes)"
say "run 3: comment-from the measured report.json, pr-number 7"
run_action comment --input comment-from=measured/report.json --input pr-number=7
[ "$RC" = 1 ] || fail "run 3: expected the report's exit code 1, got $RC"
WRITES_AFTER_3="$(api_writes)"
say "run 4: comment-from a file that is no report"
run_action badreport --input comment-from=measured/bad.json --input pr-number=7
[ "$RC" = 2 ] || fail "run 4: expected exit code 2 (not a report), got $RC"

# ---- 7. what the runs left behind
$SUDO "$PY" - "$WORK" "$OWNER_UID" "$OWNER_GID" "$WOBBLY_LINE" "$TOKEN" "$API_KEY" "$API_URL" "$WRITES_BEFORE" "$WRITES_AFTER_3" <<'PYCHECK'
import json, os, re, sys, urllib.request
work, uid, gid, line, token, api_key, api_url, writes_before, writes_after_3 = sys.argv[1:]
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
for name in ("pr.log", "baseline.log", "comment.log", "badreport.log"):
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
writes = [r for r in state["requests"] if r["method"] in ("POST", "PATCH", "DELETE")]
comment_summary = open(os.path.join(commands, "step_summary_comment"), encoding="utf-8").read()
check(comment_summary.startswith("<!-- stabilitygate:smoke -->") and "wobbly" in comment_summary,
      "run 3 (comment-from) rendered the report into the job summary")
check(len(writes) > int(writes_before) and writes[-1]["method"] == "PATCH" and ours and ours[0]["body"] == comment_summary,
      "run 3 updated the sticky comment with the gate's own rendering of the report")
badlog = open(os.path.join(work, "badreport.log"), encoding="utf-8").read()
check(re.search(r"^::error title=[^:]*::.*bad\.json", badlog, re.M) is not None, "run 4 names the bad report in an ::error")
check(len(writes) == int(writes_after_3), f"run 4 posted nothing ({len(writes) - int(writes_after_3)} writes)")
auths = {r["authorization"] for r in state["requests"]}
check(auths == {f"Bearer {token}"}, "the GitHub API saw only the token, as a Bearer")
if problems:
    sys.exit(f"{len(problems)} checks failed")
PYCHECK
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$IMAGE"
say "container smoke test passed"
