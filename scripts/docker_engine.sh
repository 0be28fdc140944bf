#!/usr/bin/env bash
# Make a Docker engine answer on this machine, starting one if needed.
#
# On a CI runner the engine is already there and this only checks it. On a bare build machine
# (no systemd, no default bridge, no registry) it installs docker.io from the distribution and
# starts dockerd without the default bridge or iptables rules: builds use `--network host`, and the
# smoke tests run the container on a bridge network they create, as the runner does for a job
# with `services:` (scripts/smoke_lib.sh).
# Exit 0 when `docker info` answers, 1 (with the reason on stderr) when no engine can run here.
set -euo pipefail

DATA_ROOT="${STABILITYGATE_DOCKER_ROOT:-/tmp/stabilitygate-docker}"
LOG="${DATA_ROOT}.log"

engine_answers() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && engine_answers; then
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "no Docker engine answers and dockerd cannot be installed here (needs root and apt-get)" >&2
    exit 1
  fi
  echo "installing docker.io from the distribution ..." >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io; } >"${LOG}.apt" 2>&1; then
    echo "apt-get install docker.io failed (see ${LOG}.apt)" >&2
    exit 1
  fi
fi

if [ "$(id -u)" != 0 ]; then
  echo "no Docker engine answers and starting dockerd needs root" >&2
  exit 1
fi

mkdir -p "$DATA_ROOT"
echo "starting dockerd (data root $DATA_ROOT, log $LOG) ..." >&2
# No default bridge, iptables or NAT: sandboxes rarely allow them; user-defined bridges still work.
nohup dockerd --data-root "$DATA_ROOT" --bridge=none --iptables=false --ip-forward=false --ip-masq=false \
  >"$LOG" 2>&1 &
for _ in $(seq 1 60); do
  if engine_answers; then
    exit 0
  fi
  sleep 1
done
echo "dockerd did not answer within 60 s; last lines of $LOG:" >&2
tail -n 20 "$LOG" >&2 || true
exit 1
