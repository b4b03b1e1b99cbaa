#!/usr/bin/env bash
# sha256-check the assembled GGUF files against the pinned hashes.
# usage: scripts/local-llm/verify.sh [1.5b|0.5b|all]   (default: all)
# Exits non-zero if a model is missing or its hash differs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

what="${1:-all}"
case "$what" in
  all) models=(1.5b 0.5b) ;;
  1.5b | 0.5b) models=("$what") ;;
  *) die "usage: $0 [1.5b|0.5b|all]" ;;
esac

fail=0
for m in "${models[@]}"; do
  model_info "$m"
  if [[ ! -f "$M_PATH" ]]; then
    log "$m: MISSING $M_PATH (run fetch.sh $m)"
    fail=1
    continue
  fi
  log "$m: hashing $M_PATH ($(du -h "$M_PATH" | cut -f1))"
  got="$(sha256_of "$M_PATH")"
  if [[ "$got" == "$M_SHA" ]]; then
    log "$m: OK sha256 $got"
  else
    log "$m: MISMATCH sha256 $got (expected $M_SHA)"
    fail=1
  fi
done
((fail == 0)) || die "verification failed"
log "all requested models verified"
