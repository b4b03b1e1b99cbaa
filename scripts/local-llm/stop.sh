#!/usr/bin/env bash
# Stop llama-server instances started with serve.sh -d (by their pid files).
# usage: scripts/local-llm/stop.sh [PORT|all]   (default: all)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

what="${1:-all}"
if [[ "$what" == all ]]; then
  shopt -s nullglob
  pidfiles=("$RUN_DIR"/llama-server-*.pid)
else
  [[ "$what" =~ ^[0-9]+$ ]] || die "usage: $0 [PORT|all]"
  pidfiles=("$RUN_DIR/llama-server-$what.pid")
fi

stopped=0
for f in "${pidfiles[@]}"; do
  if [[ ! -f "$f" ]]; then
    log "no pid file $f: nothing to stop"
    continue
  fi
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null && grep -q llama-server "/proc/$pid/cmdline" 2>/dev/null; then
    log "stopping llama-server pid $pid ($(basename "$f" .pid))"
    kill "$pid"
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "pid $pid still alive after 5s, sending SIGKILL"
      kill -9 "$pid" 2>/dev/null || true
    fi
    stopped=$((stopped + 1))
  else
    log "pid $pid from $f is not a running llama-server; removing stale pid file"
  fi
  rm -f "$f"
done
log "stopped $stopped server(s)"
