"""`Attempt`: one model asked for an answer, and what came of it.

It lives on the lowest floor because both a completion (`Completion.attempts`) and a failure
(`ModelError.attempts`) carry the list of attempts, and the error tree imports nothing above it.
"""

from __future__ import annotations

from ._record import record

__all__ = ["Attempt"]


@record
class Attempt:
    """One model asked for a completion, and what came of it.

    Attributes:
        provider: The provider asked (e.g. `"openai"`).
        model: The model asked, as named when it was built.
        error: Why the attempt failed; `None` for the attempt that answered.
        cached: The answer came from a completion cache, not from the provider.
    """

    provider: str
    model: str
    error: BaseException | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None
