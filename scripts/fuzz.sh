#!/usr/bin/env bash
# Fuzzes the PTX parser for a bounded time: scripts/fuzz.sh [SECONDS] (default 60).
# Installs cargo-fuzz from the Rust package registry if it is missing; runs on stable Rust
# with `-s none` (no sanitizer), seeded from the committed workload PTX. Exits non-zero on a
# crash.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp workloads/ptx/*/*.ptx crates/ptx/tests/data/*.ptx "$corpus"/ 2>/dev/null || true

cd fuzz
cargo fuzz run parse -s none "$corpus" -- -max_total_time="$seconds" -max_len=65536
