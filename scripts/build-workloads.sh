#!/usr/bin/env bash
# Rebuilds the built-in CUDA workloads. Every directory workloads/<name>/ holding
# <name>.cu is a workload; for each one this writes, under the output directory:
#
#   bin/<name>                   executable: sm_70 SASS plus compute_70 PTX (or the target a
#                                `// arch: sm_NN` line of the source names), linked against
#                                the shared libcudart.so.11.0 (so a replacement runtime can
#                                be preloaded in its place)
#   ptx/nvcc/<name>.ptx          nvcc -O2 PTX, no debug information
#   ptx/clang/<name>.ptx         clang-19 PTX for the same source
#   ptx/nvcc-lineinfo/saxpy.ptx  one nvcc PTX file with -lineinfo (.loc/.file directives)
#   ptxas-registers.tsv          registers per kernel entry, from ptxas -O3 on the nvcc PTX
#
# The PTX and the TSV are reproducible byte for byte (scripts/check-workload-ptx.sh
# relies on it); the binaries need not be.
#
# Usage: scripts/build-workloads.sh [--out-dir DIR] [--no-binaries]
#   --out-dir DIR   write the outputs under DIR instead of workloads/
#   --no-binaries   only PTX and the register table
# A workload that compiles a library says so on a line of its source, and gets the
# library's headers from the CUDA 12 directory of scripts/install-cuda12-toolchain.sh
# (never copied into the repository):
#   `// cccl`     CUB 2.8/Thrust/libcu++ of CUDA 12.9 (DIR/cccl/include)
#   `// cutlass`  CUTLASS (DIR/cutlass/include)
# Environment: CUDA_PATH, the toolkit root given to clang (default /usr/lib/cuda);
# CUDA12_PATH, that CUDA 12 directory (default ~/.local/cuda-12.9).
set -euo pipefail
export LC_ALL=C

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=$repo/workloads
build_binaries=1
while [ $# -gt 0 ]; do
    case "$1" in
        --out-dir)
            [ $# -ge 2 ] || { echo "error: --out-dir needs a directory" >&2; exit 2; }
            mkdir -p "$2"
            out_dir=$(cd "$2" && pwd)
            shift 2
            ;;
        --no-binaries)
            build_binaries=0
            shift
            ;;
        *)
            echo "usage: $0 [--out-dir DIR] [--no-binaries]" >&2
            exit 2
            ;;
    esac
done

cuda_path=${CUDA_PATH:-/usr/lib/cuda}
cuda12_path=${CUDA12_PATH:-$HOME/.local/cuda-12.9}
arch=sm_70
tools=(nvcc ptxas clang-19)
if [ "$build_binaries" -eq 1 ]; then tools+=(cuobjdump objdump); fi
for tool in "${tools[@]}"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool not found; scripts/install-cuda-toolkit.sh installs it" >&2
        exit 1
    fi
done

# Work from the repository root (each source is compiled from a fixed-path copy, below;
# compiler messages name that copy, /tmp/regsim-workload-sources/<name>/<name>.cu).
cd "$repo"
names=()
for dir in workloads/*/; do
    name=$(basename "$dir")
    if [ -f "workloads/$name/$name.cu" ]; then names+=("$name"); fi
done
if [ ${#names[@]} -eq 0 ]; then
    echo "error: no workloads/<name>/<name>.cu found" >&2
    exit 1
fi

scratch=$(mktemp -d)
fixed=/tmp/regsim-workload-sources
trap 'rm -rf "$scratch" "$fixed"' EXIT
# nvcc names internal-linkage symbols (`_ZN.._INTERNAL_<hash>_..`, e.g. CUTLASS's `cute::_`)
# with a hash of the source file's absolute path, so every workload is compiled from a copy
# at this fixed path: the PTX then does not depend on where the repository is checked out.
# (One build at a time on a machine.)
rm -rf "$fixed"
mkdir -p "$fixed"
cp -r workloads/common "$fixed/common"

# Start from empty output directories so that a removed workload leaves nothing behind.
rm -rf "$out_dir/ptx/nvcc" "$out_dir/ptx/clang" "$out_dir/ptx/nvcc-lineinfo"
mkdir -p "$out_dir/ptx/nvcc" "$out_dir/ptx/clang" "$out_dir/ptx/nvcc-lineinfo"
if [ "$build_binaries" -eq 1 ]; then
    rm -rf "$out_dir/bin"
    mkdir -p "$out_dir/bin"
fi

registers=$scratch/registers.tsv
: >"$registers"
for name in "${names[@]}"; do
    mkdir -p "$fixed/$name"
    cp "workloads/$name/$name.cu" "$fixed/$name/$name.cu"
    src=$fixed/$name/$name.cu
    echo "building $name" >&2
    # A workload that needs a newer target (tensor cores: sm_80) says so in its source.
    target=$(sed -n 's|^// arch: \(sm_[0-9a-z]*\)$|\1|p' "$src" | head -n 1)
    target=${target:-$arch}
    # Library headers the source asks for (`// cccl`, `// cutlass`).
    includes=()
    for library in cccl cutlass; do
        if grep -q "^// $library\b" "$src"; then
            if [ ! -d "$cuda12_path/$library/include" ]; then
                echo "error: $name needs $cuda12_path/$library/include; run scripts/install-cuda12-toolchain.sh" >&2
                exit 1
            fi
            includes+=(-I "$cuda12_path/$library/include")
        fi
    done

    nvcc -O2 -arch="$target" "${includes[@]}" -ptx -o "$out_dir/ptx/nvcc/$name.ptx" "$src"
    clang-19 -O2 -x cuda --cuda-device-only --cuda-gpu-arch="$target" --cuda-path="$cuda_path" \
        "${includes[@]}" -S -o "$out_dir/ptx/clang/$name.ptx" "$src"

    # Registers per entry: ptxas prints "Compiling entry function '<name>'" and, a few
    # lines later, "Used <n> registers". Called (.func) functions get no register line.
    ptxas -v -arch="$target" -O3 -o "$scratch/$name.cubin" "$out_dir/ptx/nvcc/$name.ptx" 2>"$scratch/$name.ptxas"
    awk -v workload="$name" '
        /Compiling entry function/ { split($0, q, "\047"); entry = q[2] }
        /Used [0-9]+ registers/ && entry != "" {
            for (i = 1; i <= NF; i++) if ($i == "Used") regs = $(i + 1)
            print workload "\t" entry "\t" regs
            entry = ""
        }' "$scratch/$name.ptxas" >>"$registers"

    if [ "$build_binaries" -eq 1 ]; then
        nvcc -O2 -arch="$target" "${includes[@]}" -cudart shared -o "$out_dir/bin/$name" "$src"
        # The simulator needs both properties: it reads the embedded PTX and replaces
        # the CUDA runtime library.
        if ! cuobjdump -lptx "$out_dir/bin/$name" | grep -q '^PTX file'; then
            echo "error: $out_dir/bin/$name embeds no PTX" >&2
            exit 1
        fi
        if ! objdump -p "$out_dir/bin/$name" | grep -q 'NEEDED *libcudart\.so\.11\.0$'; then
            echo "error: $out_dir/bin/$name is not linked against libcudart.so.11.0" >&2
            exit 1
        fi
    fi
done

# nvcc writes the absolute source path into .file directives; rewrite it relative to the
# repository so the file does not depend on where the repository is checked out.
nvcc -O2 -arch="$arch" -lineinfo -ptx -o "$scratch/saxpy-lineinfo.ptx" workloads/saxpy/saxpy.cu
sed "s|\"$repo/|\"|" "$scratch/saxpy-lineinfo.ptx" >"$out_dir/ptx/nvcc-lineinfo/saxpy.ptx"

{
    printf 'workload\tkernel\tregisters\n'
    sort "$registers"
} >"$out_dir/ptxas-registers.tsv"
echo "built ${#names[@]} workloads into $out_dir" >&2
