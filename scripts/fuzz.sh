#!/usr/bin/env bash
# Fuzzes for a bounded time: scripts/fuzz.sh [SECONDS] [TARGET...] (default 60 s each, every
# target). Targets (fuzz/fuzz_targets/): `parse` (the PTX parser), `config` (GPU config
# TOML and `--set` overrides through loading and validation), `sweep_spec` (sweep specs
# through parsing, validation and expansion).
# Installs cargo-fuzz from the Rust package registry if it is missing; runs on stable Rust
# with `-s none` (no sanitizer), each target seeded from committed files. Exits non-zero on
# a crash, an abort or a hang (an input running over 10 s).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse config sweep_spec)

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seed() {
    local target=$1 dir=$work/$1
    mkdir -p "$dir"
    case $target in
        parse)
            cp "$root"/workloads/ptx/*/*.ptx "$root"/crates/ptx/tests/data/*.ptx "$dir"/ 2>/dev/null || true ;;
        config)
            # Each config as written, and with overrides after a `---` line.
            local i=0
            for f in "$root"/configs/*.toml; do
                cp "$f" "$dir/$(basename "$f")"
                { cat "$f"; printf '\n---\nl1d.size_bytes=65536\nregister_file.design=ltrf\nsm.max_warps=1024\n'; } \
                    > "$dir/sets-$i.toml"
                { cat "$f"; printf '\n---\nregister_file.design=cerf\ngpu.num_sms=4\ndram.channels=2\nl2.slices=4\n'; } \
                    > "$dir/cerf-$i.toml"
                i=$((i + 1))
            done ;;
        sweep_spec)
            cp "$root"/experiments/*.toml "$dir"/ ;;
    esac
}

cd fuzz
for target in "${targets[@]}"; do
    seed "$target"
    echo "fuzzing $target for ${seconds}s"
    REGSIM_CONFIGS="$root/configs" cargo fuzz run "$target" -s none -O "$work/$target" -- \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096
done
