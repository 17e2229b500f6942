#!/usr/bin/env bash
# Runs the whole test suite: unit tests and the integration suite against a
# real cluster (real MariaDB shards and compute processes) on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
cargo build --workspace --all-targets
cargo test --workspace -- --nocapture
