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
if ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium and chromedriver not found and no apt-get to install them;" >&2
    echo "install Chromium and its driver so both are on PATH, then run make test again." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        echo "chromium not found; installing it needs root:" >&2
        echo "  sudo apt-get install chromium chromium-driver" >&2
        exit 1
    fi
fi
echo "installing Chromium (apt-get install chromium chromium-driver)" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver
found || { echo "chromium installed but chromium/chromedriver still not found" >&2; exit 1; }
