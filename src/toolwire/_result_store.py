"""Where the whole of a cut tool result is kept, so `read_result` can page through it.

A store maps a handle (`r_` and 16 hex digits, made from the result itself) to the untruncated
`ToolResultMessage`. `MemoryResultStore` (the default) keeps the latest results in the process;
`FileResultStore` writes each one as a JSON file; anything with the two methods of `ResultStore` (a
database, an object store) plugs in the same way. A durable run needs no store of its own: a
replayed run gets each tool step's checkpointed, untruncated result back and keeps it again.
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from typing import Protocol, runtime_checkable

import anyio

from .messages import ToolResultMessage, dump_history, load_history

__all__ = ["FileResultStore", "MemoryResultStore", "ResultStore", "valid_handle"]

_HANDLE = re.compile(r"r_[0-9a-f]{16}")


def valid_handle(handle: str) -> bool:
    """Whether `handle` has the shape of a handle toolwire makes (checked before any store sees
    it: a handle comes from the model, and a file store must never read outside its folder)."""
    return _HANDLE.fullmatch(handle) is not None


@runtime_checkable
class ResultStore(Protocol):
    """Keeps untruncated tool results by handle."""

    async def put(self, handle: str, result: ToolResultMessage) -> None:
        """Keep `result` under `handle` (the same handle always comes with the same result)."""
        ...

    async def get(self, handle: str) -> ToolResultMessage | None:
        """The result kept under `handle`, or `None` when there is none (or it expired)."""
        ...


class MemoryResultStore:
    """The latest `max_results` results, in this process; older ones expire first.

    Args:
        max_results: How many results are kept at most.
    """

    def __init__(self, max_results: int = 256) -> None:
        if max_results < 1:
            raise ValueError("max_results must be at least 1")
        self.max_results = max_results
        self._results: OrderedDict[str, ToolResultMessage] = OrderedDict()

    async def put(self, handle: str, result: ToolResultMessage) -> None:
        """Keep `result`; the oldest result goes when the store is full."""
        self._results[handle] = result
        self._results.move_to_end(handle)
        while len(self._results) > self.max_results:
            self._results.popitem(last=False)

    async def get(self, handle: str) -> ToolResultMessage | None:
        """The result under `handle`, if it is still kept."""
        found = self._results.get(handle)
        if found is not None:
            self._results.move_to_end(handle)  # read results stay longest
        return found

    def __len__(self) -> int:
        return len(self._results)


class FileResultStore:
    """One JSON file per result in `directory` (created when missing); nothing expires.

    Args:
        directory: The folder holding the results.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = anyio.Path(directory)

    def _path(self, handle: str) -> anyio.Path:
        if not valid_handle(handle):
            raise ValueError(f"not a result handle: {handle!r}")
        return self.directory / f"{handle}.json"

    async def put(self, handle: str, result: ToolResultMessage) -> None:
        """Write `result` to `<directory>/<handle>.json` (through a temporary file, so a reader
        never sees half of it)."""
        path = self._path(handle)
        await self.directory.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.part")
        await partial.write_text(dump_history([result]), encoding="utf-8")
        await partial.replace(path)

    async def get(self, handle: str) -> ToolResultMessage | None:
        """The result written under `handle`, or `None`."""
        path = self._path(handle)
        try:
            text = await path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        loaded = load_history(text)
        found = loaded[0] if loaded else None
        return found if isinstance(found, ToolResultMessage) else None
