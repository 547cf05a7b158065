#!/usr/bin/env bash
# The one test command (README "Run the tests"; .ci/run runs it too).
# Runs formatting and lint checks, the reproducibility check of the workloads' PTX,
# bounded fuzz runs (PTX parser, GPU configs, sweep specs), and the whole test suite
# (last, so its summary is the final line of the output).
#
#   REGSIM_SKIP_TOOLKIT=1   skip installing/using the CUDA toolkit (PTX reproducibility check)
#   REGSIM_FUZZ_SECONDS=N   length of each target's fuzz run (default 60; 0 skips them)
#   REGSIM_SKIP_SLURM=1     skip starting a one-node Slurm and the `regsim sweep --slurm` test
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
    step "fuzzing the PTX parser, GPU configs and sweep specs for ${fuzz_seconds}s each"
    bash scripts/fuzz.sh "$fuzz_seconds"
fi

if [ "${REGSIM_SKIP_SLURM:-0}" != 1 ]; then
    step "regsim sweep through a one-node Slurm (scripts/local-slurm.sh)"
    if bash scripts/local-slurm.sh; then
        REGSIM_SLURM_TEST=1 cargo nextest run --release -p regsim --test sweep_slurm
    else
        echo "skipping the Slurm test: the one-node cluster could not start (reason above)"
    fi
else
    step "skipping the Slurm test (REGSIM_SKIP_SLURM=1)"
fi

step "test tools (headless Chromium for the HTML report test)"
bash scripts/install-test-tools.sh || echo "install-test-tools failed; the rendering test will skip"

step "test suite"
cargo nextest run --workspace --release --no-fail-fast
