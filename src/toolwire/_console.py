"""What the installed `toolwire` script runs: a check for the `cli` extra, then the command.

The script is installed with the core package, so without the extra it must still say, in one
line, what to install rather than die on `import typer`.
"""

from __future__ import annotations

import sys

from ._extras import require_extra
from .errors import MissingDependencyError

__all__ = ["main"]


def main() -> None:
    """Run the `toolwire` command, or say which extra it needs."""
    try:
        require_extra("cli", "typer", "rich", needed_by="the toolwire command")
    except MissingDependencyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
    if sys.argv[1:2] == ["serve"]:
        # A server starts from its own command line: no root group, no other command's help.
        from ._cli_serve import console_serve

        console_serve(sys.argv[1:])
    from .cli import console_main

    console_main()
