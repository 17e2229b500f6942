#!/usr/bin/env bash
# One command on a fresh Debian machine with Rust: install what is missing,
# build, start a 3 compute + 3 shard cluster on loopback, print how to connect.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --release --bin tessera
"$CARGO_TARGET_DIR/release/tessera" cluster up --data-dir "${TESSERA_DATA_DIR:-./tessera-data}" "$@"
