#!/usr/bin/env bash
# Makes sure headless Chromium and its WebDriver (Debian's `chromium` and `chromium-driver`) are
# on this machine for the browser tests in tests/ui: found on PATH, or installed with apt-get.
set -euo pipefail

found() {
    command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1
}

if found; then
    exit 0
fi
bash "$(dirname "$0")/apt-install.sh" "Chromium and chromedriver" chromium chromium-driver
found || { echo "chromium installed but chromium/chromedriver still not found" >&2; exit 1; }
