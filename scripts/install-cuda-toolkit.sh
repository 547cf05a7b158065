#!/usr/bin/env bash
# Installs the CUDA 11.8 toolkit (nvcc, ptxas, cuobjdump, libcudart) and clang-19 from
# Debian's contrib/non-free components. Only needed to *rebuild* workloads: the committed
# PTX and binaries let the tests run without it.
#
# We enable non-free by copying the machine's own apt source entry with its components
# changed, so no registry host name is written into this repository.
set -euo pipefail

if command -v nvcc >/dev/null 2>&1 && command -v clang-19 >/dev/null 2>&1; then
    echo "CUDA toolkit and clang-19 already installed"
    exit 0
fi

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

src=/etc/apt/sources.list.d/debian.sources
dst=/etc/apt/sources.list.d/regsim-nonfree.sources
if [ ! -f "$dst" ]; then
    if [ ! -f "$src" ]; then
        echo "error: $src not found; enable Debian's contrib and non-free components by hand" >&2
        exit 1
    fi
    sed 's/^Components: main$/Components: contrib non-free/' "$src" | sudo_if_needed tee "$dst" >/dev/null
fi
sudo_if_needed apt-get update
DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y nvidia-cuda-toolkit clang-19
