#!/usr/bin/env bash
# The one test command (README "Run the tests"; .ci/run runs it too).
# Runs formatting and lint checks, the reproducibility check of the workloads' PTX, a
# bounded fuzz run of the PTX parser, and the whole test suite (last, so its summary is the
# final line of the output).
#
#   REGSIM_SKIP_TOOLKIT=1   skip installing/using the CUDA toolkit (PTX reproducibility check)
#   REGSIM_FUZZ_SECONDS=N   length of the fuzz run (default 60; 0 skips it)
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

if [ "${REGSIM_SKIP_TOOLKIT:-0}" != 1 ]; then
    step "CUDA toolkit (needed to regenerate the workloads' PTX)"
    bash scripts/install-cuda-toolkit.sh
    step "regenerated workload PTX matches the committed files"
    bash scripts/check-workload-ptx.sh
else
    step "skipping the PTX reproducibility check (REGSIM_SKIP_TOOLKIT=1)"
fi

fuzz_seconds=${REGSIM_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ] && [ -d fuzz ]; then
    step "fuzzing the PTX parser for ${fuzz_seconds}s"
    bash scripts/fuzz.sh "$fuzz_seconds"
fi

step "test tools (headless Chromium for the HTML report test)"
bash scripts/install-test-tools.sh || echo "install-test-tools failed; the rendering test will skip"

step "test suite"
cargo nextest run --workspace --release --no-fail-fast
