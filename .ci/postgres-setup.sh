#!/usr/bin/env bash
# Makes sure the Postgres server binaries that tests/_postgres.py starts (initdb, pg_ctl) are on
# this machine: it looks where that module looks (PATH, `pg_config --bindir`,
# /usr/lib/postgresql/*/bin) and, when none is there, installs Debian's `postgresql` package.
# The tests start their own server on a free loopback port; no system service is used.
set -euo pipefail

found() {
    command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1 && return 0
    if command -v pg_config >/dev/null 2>&1; then
        local bindir
        bindir="$(pg_config --bindir 2>/dev/null || true)"
        [ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] && return 0
    fi
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && return 0
    done
    return 1
}

if found; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "Postgres server binaries (initdb, pg_ctl) not found and no apt-get to install them;" >&2
    echo "install PostgreSQL 13+ so that initdb is on PATH, then run make test again." >&2
    exit 1
fi
sudo=()
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        echo "Postgres server binaries not found; installing them needs root:" >&2
        echo "  sudo apt-get install postgresql" >&2
        exit 1
    fi
fi
echo "installing Postgres server binaries (apt-get install postgresql)" >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql
found || { echo "postgresql installed but initdb/pg_ctl still not found" >&2; exit 1; }
