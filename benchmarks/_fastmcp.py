"""Finding the Python that runs fastmcp for the MCP benchmarks.

fastmcp lives in its own virtual environment (it may want other versions of `mcp` or `starlette`
than toolwire's), so its server and its client run under that environment's Python; the
benchmark files import only the standard library and anyio at their top, which both have.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

__all__ = ["find_fastmcp"]

_VERSIONS = (
    "from importlib.metadata import version as v; import sys, anyio, uvicorn; "
    "print(f\"fastmcp {v('fastmcp')} (mcp {v('mcp')}, starlette {v('starlette')}, \""
    "f\"httpx2 {v('httpx2')}, Python {sys.version.split()[0]})\")"
)


def find_fastmcp(given: str | None) -> tuple[str, str] | None:
    """The interpreter that has fastmcp and uvicorn (`given`, else `$FASTMCP_PYTHON`, else this
    one if it has fastmcp) and a line naming the versions it runs; None when there is none."""
    python = given or os.environ.get("FASTMCP_PYTHON")
    if not python:
        if importlib.util.find_spec("fastmcp") is None:
            return None
        python = sys.executable
    done = subprocess.run([python, "-c", _VERSIONS], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{python} cannot run fastmcp: {done.stderr.strip()[-500:]}")
    return python, f"{done.stdout.strip()} from {python}"
