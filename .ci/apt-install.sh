#!/usr/bin/env bash
# Installs Debian packages for the test setup: `apt-install.sh WHAT [APT-OPTION...] PACKAGE...`
# (WHAT names them in messages). Used by postgres-setup.sh and chromium-setup.sh, which
# `make setup` runs at the same time: one flock keeps two apt-get runs off dpkg's lock together.
set -euo pipefail
what="$1"
shift
packages=()
for arg in "$@"; do
    [[ "$arg" == -* ]] || packages+=("$arg")
done
if ! command -v apt-get >/dev/null 2>&1; then
    echo "$what not found and no apt-get to install it;" >&2
    echo "install ${packages[*]} (or your system's equivalent), then run make test again." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        echo "$what not found; installing it needs root:" >&2
        echo "  sudo apt-get install ${packages[*]}" >&2
        exit 1
    fi
fi
echo "installing $what (apt-get install ${packages[*]})" >&2
exec 9>"${TMPDIR:-/tmp}/toolwire-apt.lock"
flock 9
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
