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
bash "$(dirname "$0")/apt-install.sh" "Postgres server binaries (initdb, pg_ctl)" --no-install-recommends postgresql
found || { echo "postgresql installed but initdb/pg_ctl still not found" >&2; exit 1; }
