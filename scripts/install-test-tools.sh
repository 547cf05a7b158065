#!/usr/bin/env bash
# Test-only tools from Debian's packages: headless Chromium, which renders the HTML
# report (regsim report --html) in crates/cli/tests/report_html.rs. Idempotent; a no-op
# when chromium is already on PATH. Without root or apt-get it prints why and exits 0:
# the rendering test then skips with a printed reason.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    echo "install-test-tools: chromium present ($(command -v chromium))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-test-tools: no apt-get; the chromium rendering test will skip"
    exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    else
        echo "install-test-tools: not root and no passwordless sudo; the chromium rendering test will skip"
        exit 0
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "install-test-tools: installed $(chromium --version 2>/dev/null || echo chromium)"
