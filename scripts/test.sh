#!/usr/bin/env bash
# The one test command (README "The two commands"; .ci/run runs it too).
# Runs formatting and lint checks, the reproducibility check of the workloads' PTX,
# bounded fuzz runs (PTX parser, GPU configs, sweep specs), and the whole test suite once
# (last, so its summary is the final line of the output).
#
# What it installs where missing (root and apt-get needed for the Debian packages; each
# step says why it skips otherwise): the CUDA 11.8 toolkit and clang-19
# (scripts/install-cuda-toolkit.sh), cargo-fuzz (`cargo install`, scripts/fuzz.sh),
# slurm-wlm and munge (scripts/local-slurm.sh), chromium (scripts/install-test-tools.sh).
# What it starts: munged, slurmctld and slurmd, a one-node Slurm for the
# `regsim sweep --slurm` tests; when it exits, however it exits, it stops the daemons it
# started (and only those).
#
#   REGSIM_SKIP_TOOLKIT=1   skip installing/using the CUDA toolkit (PTX reproducibility check)
#   REGSIM_FUZZ_SECONDS=N   length of each fuzz target's run (default 60; 0 skips them)
#   REGSIM_SKIP_SLURM=1     skip starting a one-node Slurm (the Slurm tests then skip)
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
    step "CUDA 12 headers and CUTLASS (the library workloads' dependencies)"
    bash scripts/install-cuda12-toolchain.sh
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
    step "a one-node Slurm for the regsim sweep --slurm tests (scripts/local-slurm.sh)"
    # The daemons this run starts are listed here, and stopped on exit.
    LOCAL_SLURM_STARTED=$(mktemp)
    export LOCAL_SLURM_STARTED
    trap 'bash scripts/local-slurm.sh stop; rm -f "$LOCAL_SLURM_STARTED"' EXIT
    if bash scripts/local-slurm.sh; then
        # The suite below runs the Slurm tests (crates/cli/tests/sweep_slurm.rs) once.
        export REGSIM_SLURM_TEST=1
    else
        echo "the Slurm tests will skip: the one-node cluster could not start (reason above)"
    fi
else
    step "skipping the one-node Slurm (REGSIM_SKIP_SLURM=1): the Slurm tests will skip"
fi

step "test tools (headless Chromium for the HTML report test)"
bash scripts/install-test-tools.sh || echo "install-test-tools failed; the rendering test will skip"

step "test suite"
cargo nextest run --workspace --release --no-fail-fast
