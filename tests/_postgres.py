"""A real, throwaway Postgres server for tests and benchmarks.

`running_postgres(base_dir)` creates a cluster with `initdb`, starts it with `pg_ctl` on a free
loopback port, yields a `postgresql://` URL (password auth, its own database) and stops and
removes it on exit. Postgres refuses to run as root, so when this process is root the server runs
as an unprivileged user (`postgres` when it exists, else `nobody`; `TOOLWIRE_PG_USER` overrides)
and its cluster lives in a fresh directory of the system temp dir that user can reach (a private
pytest directory under root's 0700 tree would not be), linked from `base_dir`.

Binaries are looked up on PATH, then in `pg_config --bindir`, then in
/usr/lib/postgresql/<version>/bin (newest first). When none is found this raises
`PostgresNotFound`: tests that need Postgres fail, they are never skipped (`make test` installs it
through .ci/postgres-setup.sh).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from _ports import free_port

__all__ = [
    "PostgresNotFound",
    "RunningPostgres",
    "find_bindir",
    "running_postgres",
    "server_account",
    "start_postgres",
]

USER = "toolwire"
DATABASE = "toolwire"
START_TIMEOUT = 60.0
_NEEDED = ("initdb", "pg_ctl")


class PostgresNotFound(RuntimeError):
    """No Postgres server binaries (initdb, pg_ctl) on this machine."""


def find_bindir() -> Path:
    """The directory holding `initdb` and `pg_ctl`, or raise `PostgresNotFound`."""
    candidates: list[Path] = []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, check=False
        ).stdout.strip()
        if out:
            candidates.append(Path(out))

    def version(path: Path) -> tuple[int, ...]:
        return tuple(int(n) for n in re.findall(r"\d+", path.parent.name)) or (0,)

    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    for bindir in candidates:
        if all((bindir / name).is_file() and os.access(bindir / name, os.X_OK) for name in _NEEDED):
            return bindir
    raise PostgresNotFound(
        "no Postgres server binaries (initdb, pg_ctl) on PATH, in `pg_config --bindir` or in "
        "/usr/lib/postgresql/*/bin; install them (Debian/Ubuntu: apt-get install postgresql) "
        "or run .ci/postgres-setup.sh"
    )


@dataclass(frozen=True)
class _Account:
    uid: int
    gid: int
    name: str


def server_account() -> _Account | None:
    """Who runs the server: None for this process's own user when it is not root."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("TOOLWIRE_PG_USER")
    names = [wanted] if wanted else ["postgres", "nobody"]
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid != 0:
            return _Account(entry.pw_uid, entry.pw_gid, name)
    raise PostgresNotFound(
        f"running as root and no unprivileged user to run Postgres as (tried {', '.join(names)}); "
        "create one or set TOOLWIRE_PG_USER"
    )


def _run(args: list[str], account: _Account | None, log: Path) -> None:
    """Run a Postgres tool as the server's user; raise with its output when it fails."""
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    if account is None:
        done = subprocess.run(args, capture_output=True, text=True, env=env, cwd="/", check=False)
    else:
        done = subprocess.run(
            args,
            capture_output=True,
            text=True,
            env=env,
            cwd="/",
            check=False,
            user=account.uid,
            group=account.gid,
            extra_groups=[],
        )
    if done.returncode != 0:
        server_log = log.read_text(errors="replace") if log.exists() else ""
        raise RuntimeError(
            f"{' '.join(args[:2])} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
            f"\n--- server log ---\n{server_log}"
        )


def _wait_until_ready(url: str, timeout: float) -> None:
    """Connect until the server answers a query, at most `timeout` seconds."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(url, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # a connection attempt loop, bounded by the deadline


@dataclass
class RunningPostgres:
    """A started server: its URL, and `stop()` that stops it and removes its cluster."""

    url: str
    base_dir: Path
    root: Path
    data: Path
    log: Path
    bindir: Path
    account: _Account | None

    def stop(self) -> None:
        """Stop the server (fast, else immediate), keep its log in `base_dir`, remove the cluster."""
        stop = [str(self.bindir / "pg_ctl"), "stop", "-D", str(self.data), "-w", "-m"]
        try:
            try:
                _run([*stop, "fast"], self.account, self.log)
            except RuntimeError:
                _run([*stop, "immediate"], self.account, self.log)
        finally:
            _remove(self.base_dir, self.root, self.log)


def _remove(base_dir: Path, root: Path, log: Path) -> None:
    if log.exists():
        shutil.copyfile(log, base_dir / f"{root.name}.log")
    shutil.rmtree(root, ignore_errors=True)
    link = base_dir / root.name
    if link.is_symlink():
        link.unlink()


def start_postgres(base_dir: Path) -> RunningPostgres:
    """Start a fresh Postgres server; the caller stops it with `RunningPostgres.stop()`.

    Args:
        base_dir: A directory for the cluster (or a link to it when running as root) and logs.

    Returns:
        The server, whose `url` is `postgresql://toolwire:<password>@127.0.0.1:<port>/toolwire`,
        a database that exists.

    Raises:
        PostgresNotFound: No server binaries, or no unprivileged user to run them as.
    """
    import psycopg

    bindir = find_bindir()
    account = server_account()
    base_dir.mkdir(parents=True, exist_ok=True)
    if account is None:
        root = Path(tempfile.mkdtemp(prefix="postgres-", dir=base_dir))
    else:
        root = Path(tempfile.mkdtemp(prefix="toolwire-pg-"))
        os.chown(root, account.uid, account.gid)
        (base_dir / root.name).symlink_to(root)
    data = root / "data"
    log = root / "server.log"
    password = secrets.token_hex(16)
    pwfile = root / "pwfile"
    pwfile.write_text(password + "\n")
    if account is not None:
        os.chown(pwfile, account.uid, account.gid)
    started = False
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-instructions",
            ],
            account,
            log,
        )
        pwfile.unlink()
        port = 0
        for attempt in range(3):
            port = free_port()
            # Loopback TCP only (no Unix socket dir to own); durability off since the tests kill
            # clients, never the server.
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories='' "
                "-c fsync=off -c full_page_writes=off -c synchronous_commit=off "
                "-c max_connections=300"
            )
            try:
                _run(
                    [
                        str(bindir / "pg_ctl"),
                        "start",
                        "-D",
                        str(data),
                        "-l",
                        str(log),
                        "-w",
                        "-t",
                        str(int(START_TIMEOUT)),
                        "-o",
                        options,
                    ],
                    account,
                    log,
                )
            except RuntimeError:
                # Another process may have taken the port between probe and bind: try another.
                if attempt == 2:
                    raise
                continue
            started = True
            break
        server = RunningPostgres(
            f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DATABASE}",
            base_dir,
            root,
            data,
            log,
            bindir,
            account,
        )
        admin = f"postgresql://{USER}:{password}@127.0.0.1:{port}/postgres"
        _wait_until_ready(admin, START_TIMEOUT)
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    except BaseException:
        if started:
            RunningPostgres("", base_dir, root, data, log, bindir, account).stop()
        else:
            _remove(base_dir, root, log)
        raise
    return server


@contextlib.contextmanager
def running_postgres(base_dir: Path) -> Generator[str, None, None]:
    """Run a fresh Postgres server for the duration of the block.

    Args:
        base_dir: A directory for the cluster (or a link to it when running as root) and logs.

    Yields:
        `postgresql://toolwire:<password>@127.0.0.1:<port>/toolwire`, a database that exists.

    Raises:
        PostgresNotFound: No server binaries, or no unprivileged user to run them as.
    """
    server = start_postgres(base_dir)
    try:
        yield server.url
    finally:
        server.stop()
