#!/usr/bin/env bash
# Serve a local Qwen2.5-Coder GGUF with llama-server (OpenAI-compatible API with
# tool calling) on 127.0.0.1, wait until /health answers, print the base URL.
#
# usage: scripts/local-llm/serve.sh [-d|--background] [--deterministic] MODEL [PORT] [-- EXTRA_LLAMA_SERVER_ARGS...]
#   MODEL  1.5b | 0.5b
#   PORT   default 8080
#   -d     run in the background (or REPLIO_LLM_BACKGROUND=1): writes
#          $REPLIO_LLM_DIR/run/llama-server-PORT.pid and .log, returns once healthy;
#          stop it with scripts/local-llm/stop.sh PORT
#   --deterministic  (or REPLIO_LLM_DETERMINISTIC=1) add --no-cache-prompt -np 1: every
#          request is evaluated from scratch, so an identical temperature-0 request gives
#          byte-identical output whatever was served before (slower: no prompt reuse)
# Without -d the server runs in the foreground (Ctrl-C stops it); the log goes to the
# same .log file and the base URL is printed once it is healthy.
# env: REPLIO_LLM_DIR, REPLIO_LLM_CTX (4096), REPLIO_LLM_THREADS (2), REPLIO_LLM_SEED (42),
#      REPLIO_LLM_HEALTH_TIMEOUT (seconds, 180), LLAMA_SERVER (binary path)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

background="${REPLIO_LLM_BACKGROUND:-0}"
deterministic="${REPLIO_LLM_DETERMINISTIC:-0}"
args=()
extra=()
while (($#)); do
  case "$1" in
    -d | --background) background=1 ;;
    --deterministic) deterministic=1 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) args+=("$1") ;;
  esac
  shift
done
((${#args[@]} >= 1 && ${#args[@]} <= 2)) || die "usage: $0 [-d] MODEL(1.5b|0.5b) [PORT] [-- extra llama-server args]"
model="${args[0]}"
port="${args[1]:-8080}"
[[ "$port" =~ ^[0-9]+$ ]] || die "PORT must be a number, got '$port'"
model_info "$model"

[[ -x "$LLAMA_SERVER" ]] || die "llama-server not found at $LLAMA_SERVER (run build.sh)"
[[ -f "$M_PATH" ]] || die "model not found at $M_PATH (run fetch.sh $model)"
[[ -f "$TEMPLATE" ]] || die "chat template not found at $TEMPLATE"

mkdir -p "$RUN_DIR"
pidfile="$RUN_DIR/llama-server-$port.pid"
logfile="$RUN_DIR/llama-server-$port.log"
base="http://127.0.0.1:$port"

healthy() { curl -fsS -m 2 "$base/health" >/dev/null 2>&1; }

if [[ -f "$pidfile" ]]; then
  oldpid="$(cat "$pidfile")"
  if kill -0 "$oldpid" 2>/dev/null && grep -q llama-server "/proc/$oldpid/cmdline" 2>/dev/null; then
    if grep -qF "$M_FILE" "/proc/$oldpid/cmdline" && healthy; then
      log "already serving $model on port $port (pid $oldpid)"
      echo "$base/v1"
      exit 0
    fi
    die "port $port is already served by pid $oldpid with another model; run stop.sh $port first"
  fi
  rm -f "$pidfile"
fi
if healthy || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  die "something is already listening on 127.0.0.1:$port"
fi

cmd=("$LLAMA_SERVER"
  -m "$M_PATH"
  --host 127.0.0.1 --port "$port"
  -c "${REPLIO_LLM_CTX:-4096}"
  -t "${REPLIO_LLM_THREADS:-2}"
  --jinja --chat-template-file "$TEMPLATE"
  --seed "${REPLIO_LLM_SEED:-42}"
  --alias "qwen2.5-coder-$model-instruct")
if [[ "$deterministic" == 1 ]]; then
  # The prompt cache makes output depend on what the slot held before (a reused
  # prefix is evaluated in different batches), so turn it off, and use one slot.
  cmd+=(--no-cache-prompt -np 1)
fi
cmd+=("${extra[@]}")

log "starting: ${cmd[*]}"
log "log file: $logfile"
start_ns=$(date +%s%N)
# setsid: own session, so the server outlives the shell that started it (-d).
setsid "${cmd[@]}" >"$logfile" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$pidfile"

cleanup() {
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}
if [[ "$background" != 1 ]]; then
  trap cleanup EXIT INT TERM
fi

timeout_s="${REPLIO_LLM_HEALTH_TIMEOUT:-180}"
deadline=$((SECONDS + timeout_s))
until healthy; do
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$pidfile"
    tail -n 30 "$logfile" >&2 || true
    die "llama-server exited during startup (see $logfile)"
  fi
  if ((SECONDS >= deadline)); then
    tail -n 30 "$logfile" >&2 || true
    kill "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    die "llama-server not healthy after ${timeout_s}s"
  fi
  sleep 0.2
done
ms=$((($(date +%s%N) - start_ns) / 1000000))
log "$model healthy on port $port after ${ms} ms (pid $pid)"
echo "$base/v1"

if [[ "$background" != 1 ]]; then
  log "serving in the foreground; Ctrl-C to stop"
  wait "$pid" || true
fi
