#!/usr/bin/env bash
# Record the bundled catalog against the local models and approve the goldens.
# usage: scripts/local-llm/record.sh [1.5b|0.5b|all] [-- extra `replio eval run` flags, e.g. --fixture ID]
# Needs the servers from serve.sh: the 1.5B on port 8080, the 0.5B on port 8081.
# REPLIO_PROJECT=DIR records another project (default: this repository), e.g. examples/trials.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
REPO="$(cd "$SCRIPT_DIR/../.." && pwd)"
PROJECT="${REPLIO_PROJECT:-$REPO}"

which="${1:-all}"
shift || true
[ "${1:-}" = "--" ] && shift

record() {  # record MODEL PORT [replio flags...]
  local model="$1" port="$2"
  shift 2
  local url="http://127.0.0.1:$port/v1"
  curl -sf "http://127.0.0.1:$port/health" >/dev/null \
    || die "no server on port $port; start it: scripts/local-llm/serve.sh -d $model $port"
  log "recording the catalog against qwen2.5-coder-$model-instruct at $url"
  # One fixture at a time: each gets the server's whole context window.
  replio eval --path "$PROJECT" run --provider "llamacpp:qwen2.5-coder-$model-instruct" --base-url "$url" \
    --record-mode all --update-golden --jobs 1 "$@" || true
}

case "$which" in
  1.5b) record 1.5b 8080 "$@" ;;
  0.5b) record 0.5b 8081 "$@" ;;
  all) record 1.5b 8080 "$@"; record 0.5b 8081 "$@" ;;
  *) die "unknown model '$which' (expected 1.5b, 0.5b or all)" ;;
esac
