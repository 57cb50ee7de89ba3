"""Every exception toolwire raises, in one tree.

```
ToolwireError                     base of everything below
├── ToolError                     a tool failed; its message is what the model sees
│   ├── ToolArgumentsError        the model's arguments did not validate (never retried)
│   ├── ToolTimeoutError          the call ran past its time limit (retryable)
│   ├── CalculatorError           the calculator refused or could not evaluate an expression
│   ├── EgressBlocked             the egress guard refused a URL (`url`, `reason`)
│   ├── EgressTimeout             a guarded HTTP exchange ran past its deadline (retryable)
│   └── UpstreamError             the service behind a prebuilt tool answered with an error
│       └── UpstreamUnavailable   ...a transient one: 429, 5xx, connection trouble (retryable)
├── RetryableError                a transient failure worth another attempt (carries retry_after)
├── UnknownToolError              no tool by that name (also a LookupError)
├── DuplicateToolError            a registry already holds that name (also a ValueError)
│   └── ToolNameConflictError     ...two toolsets offer one name and the caller said refuse
├── ToolNameError                 a name providers reject (also a ValueError)
├── SchemaError                   a JSON Schema toolwire cannot use (also a ValueError)
├── UnsupportedError              a provider or dialect cannot do what was asked
├── MissingDependencyError        an optional extra is not installed (also an ImportError)
├── MissingApiKeyError            a provider's key is neither given nor in its variable (also a ValueError)
├── ModelError                    talking to a model went wrong
│   ├── ModelHTTPError            the provider answered with an HTTP error (status, message)
│   │   └── RetryableModelError   ...a 429 or 5xx: also a RetryableError, with retry_after
│   ├── ModelConnectionError      no answer at all: connection failed or timed out (retryable)
│   ├── ModelResponseError        a broken answer: in-stream error, truncated stream, bad payload
│   │   └── ModelStreamError      ...the provider's own error event inside an answer
│   ├── OutputValidationError     a structured answer still invalid after the corrections
│   └── ModelRequestsForbidden    a real provider request where the caller forbade them (tests)
├── RunsDatabaseError             a durable runs database cannot be used (unreachable, not set up)
├── McpError                      an MCP server failed a request (JSON-RPC `code` when sent)
│   ├── McpProtocolError          ...answered with something the protocol does not allow
│   ├── McpAuthError              ...refused our credentials (HTTP 401/403)
│   └── McpConnectionError        ...could not be reached, or dropped (`may_have_run`)
├── InvalidTokenError             a toolwire MCP server refuses an access token (answered 401)
└── UsageLimitExceeded            a run reached a limit and the caller asked for an exception
```

`ToolError` and its subclasses are failures fed back to the model as error results; the others are
failures of the program around the model and reach the caller. "Retryable" errors are also
`RetryableError`s, so `with_retry` retries them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from ._attempts import Attempt
from ._record import record

__all__ = [
    "ArgumentProblem",
    "CalculatorError",
    "DuplicateToolError",
    "EgressBlocked",
    "EgressTimeout",
    "InvalidTokenError",
    "McpAuthError",
    "McpConnectionError",
    "McpError",
    "McpProtocolError",
    "MissingApiKeyError",
    "MissingDependencyError",
    "ModelConnectionError",
    "ModelError",
    "ModelHTTPError",
    "ModelRequestsForbidden",
    "ModelResponseError",
    "ModelStreamError",
    "OutputValidationError",
    "RetryableError",
    "RetryableModelError",
    "RunsDatabaseError",
    "SchemaError",
    "ToolArgumentsError",
    "ToolError",
    "ToolNameConflictError",
    "ToolNameError",
    "ToolTimeoutError",
    "ToolwireError",
    "UnknownToolError",
    "UnsupportedError",
    "UpstreamError",
    "UpstreamUnavailable",
    "UsageLimitExceeded",
]


class ToolwireError(Exception):
    """Base class of every toolwire error."""


class ToolError(ToolwireError):
    """Raise inside a tool to give the model an error result with exactly this message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


@record(frozen=True)
class ArgumentProblem:
    """One thing wrong with a tool call's arguments.

    Attributes:
        path: Where the problem is, as keys and indexes from the root (empty for the whole input).
        message: What was expected.
        received: A short rendering of what came instead, or `None` when nothing came.
    """

    path: tuple[str | int, ...]
    message: str
    received: str | None = None

    def render(self) -> str:
        where = _render_path(self.path)
        text = f"{where}: {self.message}"
        if self.received is not None:
            text += f" (received {self.received})"
        return text


def _render_path(path: Sequence[str | int]) -> str:
    if not path:
        return "arguments"
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


class ToolArgumentsError(ToolError):
    """The arguments of a tool call did not validate.

    The message lists every problem with its path, what was expected and what came, so a model can
    correct the call.
    """

    def __init__(self, tool_name: str, problems: Sequence[ArgumentProblem]) -> None:
        self.tool_name = tool_name
        self.problems = tuple(problems)
        lines = [f"Invalid arguments for tool {tool_name!r}:"]
        lines += [f"- {p.render()}" for p in self.problems]
        lines.append("Fix these and call the tool again.")
        super().__init__("\n".join(lines))


class ToolTimeoutError(ToolError):
    """A tool call ran longer than its time limit and was cancelled."""

    def __init__(self, tool_name: str, seconds: float) -> None:
        self.tool_name = tool_name
        self.seconds = seconds
        super().__init__(f"Tool {tool_name!r} timed out after {seconds:g} seconds.")


class RetryableError(ToolwireError):
    """A transient failure (rate limit, overload, dropped connection) worth another attempt.

    Attributes:
        retry_after: Seconds the other side asked us to wait, when it said so.
    """

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class CalculatorError(ToolError):
    """An expression the calculator refuses or cannot evaluate."""


class EgressBlocked(ToolError):
    """The egress guard refused a URL; the message says what was blocked and why.

    Attributes:
        url: The URL that was refused.
        reason: Why, in a short phrase.
    """

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"Blocked request to {url}: {reason}.")


class EgressTimeout(ToolError, RetryableError):
    """A guarded exchange ran past its deadline; a `ToolError` that `with_retry` may retry."""


class UpstreamError(ToolError):
    """The service behind a tool answered with an error, or with something unreadable.

    Attributes:
        service: The service's name, as the message shows it.
        status: The HTTP status, when there was a response.
    """

    def __init__(self, service: str, message: str, *, status: int | None = None) -> None:
        self.service = service
        self.status = status
        super().__init__(message)


class UpstreamUnavailable(UpstreamError, RetryableError):
    """A transient upstream failure (429, 5xx, connection trouble): worth retrying later.

    It is a `ToolError` (the model reads the message) and a `RetryableError` (`with_retry` retries
    it, honouring `retry_after`).
    """

    def __init__(
        self,
        service: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(service, message, status=status)
        self.retry_after = retry_after


class UnknownToolError(ToolwireError, LookupError):
    """No tool has the requested name; `suggestions` holds the closest names."""

    def __init__(self, name: str, available: Iterable[str]) -> None:
        names = sorted(available)
        self.name = name
        self.available = tuple(names)
        self.suggestions = tuple(difflib.get_close_matches(name, names, n=3, cutoff=0.5))
        message = f"Unknown tool {name!r}."
        if self.suggestions:
            message += " Did you mean: " + ", ".join(repr(s) for s in self.suggestions) + "?"
        elif names:
            shown = ", ".join(repr(s) for s in names[:20])
            message += f" Available: {shown}" + (" ..." if len(names) > 20 else "") + "."
        else:
            message += " No tools are available."
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0])


class DuplicateToolError(ToolwireError, ValueError):
    """A tool with this name is already registered."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"A tool named {name!r} is already registered.")


class ToolNameConflictError(DuplicateToolError):
    """Two toolsets of a `CombinedToolset(on_conflict="error")` offer the same tool name.

    Attributes:
        name: The name offered twice.
        sources: The labels of the toolsets that offer it, in order.
    """

    def __init__(self, name: str, sources: Sequence[str]) -> None:
        self.sources = tuple(sources)
        super().__init__(name)
        self.args = (
            f"Tool name {name!r} is offered by " + " and ".join(self.sources) + "; rename or "
            "prefix one of them, or combine them with on_conflict='first' or 'prefix'.",
        )


class ToolNameError(ToolwireError, ValueError):
    """A tool name that providers would reject."""


class SchemaError(ToolwireError, ValueError):
    """A JSON Schema toolwire cannot work with (e.g. a `$ref` that points nowhere)."""


class UnsupportedError(ToolwireError):
    """A provider, model or schema dialect cannot do what was asked.

    Raised at build or request time instead of silently dropping or downgrading anything.
    """


class MissingDependencyError(ToolwireError, ImportError):
    """An optional extra is not installed; the message is one line naming the `pip install`.

    Attributes:
        package: The missing distribution, e.g. `"openai"`.
        extra: The toolwire extra that brings it, e.g. `"openai"` for `toolwire[openai]`.
    """

    def __init__(self, package: str, extra: str, *, needed_by: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"the {package!r} package, needed by {needed_by}, is not installed: "
            f"pip install 'toolwire[{extra}]'",
            name=package,
        )


class MissingApiKeyError(ToolwireError, ValueError):
    """A provider's API key was neither passed nor set in its environment variable.

    Attributes:
        provider: The provider, e.g. `"anthropic"`.
        env_var: The variable the key is read from, e.g. `"ANTHROPIC_API_KEY"`.
    """

    def __init__(self, provider: str, env_var: str) -> None:
        self.provider = provider
        self.env_var = env_var
        super().__init__(f"{provider} needs an API key: set {env_var} or pass api_key=...")


class ModelError(ToolwireError):
    """Base class of failures talking to a model.

    Attributes:
        attempts: Every model asked before the failure, in order, the failed one last, when a
            wrapper model (fallback, retry) stepped in; empty otherwise.
    """

    attempts: tuple[Attempt, ...] = ()


class OutputValidationError(ModelError):
    """A structured answer did not satisfy its type (after every correction the caller allowed).

    Attributes:
        problems: What was wrong, each with its path, what was expected and what came.
        output: The last answer the model gave (its text, or the decoded value).
        completion: The completion that carried it, when known.
    """

    def __init__(
        self, problems: Sequence[ArgumentProblem], output: object = None, completion: object = None
    ) -> None:
        self.problems = tuple(problems)
        self.output = output
        self.completion = completion
        lines = ["The structured answer is invalid:"]
        lines += [f"- {p.render().replace('arguments', 'answer', 1)}" for p in self.problems]
        super().__init__("\n".join(lines))

    def feedback(self) -> str:
        """The message sent back to the model so it can correct its answer."""
        return f"{self}\nFix these and give the whole answer again."


class ModelHTTPError(ModelError):
    """The provider answered a request with an HTTP error.

    Attributes:
        status_code: The HTTP status.
        provider: Which provider answered.
        body: The decoded error body, when there was one.
        request_id: The provider's id for the request (for its support), when it sent one.
    """

    def __init__(
        self,
        status_code: int,
        message: str,
        *,
        provider: str | None = None,
        body: object = None,
        request_id: str | None = None,
    ) -> None:
        self.status_code = status_code
        self.provider = provider
        self.body = body
        self.message = message
        self.request_id = request_id
        who = f"{provider} " if provider else ""
        super().__init__(f"{who}HTTP {status_code}: {message}")


class RetryableModelError(ModelHTTPError, RetryableError):
    """A 429 or 5xx from a provider: worth retrying, after `retry_after` seconds when given."""

    def __init__(
        self,
        status_code: int,
        message: str,
        *,
        provider: str | None = None,
        body: object = None,
        retry_after: float | None = None,
        request_id: str | None = None,
    ) -> None:
        ModelHTTPError.__init__(
            self, status_code, message, provider=provider, body=body, request_id=request_id
        )
        self.retry_after = retry_after


class ModelConnectionError(ModelError, RetryableError):
    """The provider could not be reached, or did not answer in time; worth retrying."""

    def __init__(self, message: str, *, provider: str | None = None) -> None:
        RetryableError.__init__(self, message)
        self.provider = provider


class ModelResponseError(ModelError):
    """The provider's answer cannot be used: an in-stream error, a cut stream, a broken payload.

    Never a half-built completion passed on as complete.
    """


class ModelStreamError(ModelResponseError):
    """The provider reported an error inside its answer: an error event in a stream (e.g. Groq's
    `tool_use_failed`), or an error object in a 200 response.

    Attributes:
        provider: Which provider reported it.
        code: The provider's error code, when it gave one.
        body: The decoded error object.
        failed_generation: What the model wrote before the provider refused it, when given.
        request_id: The provider's id for the request, when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        code: str | None = None,
        body: object = None,
        failed_generation: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.code = code
        self.body = body
        self.failed_generation = failed_generation
        self.request_id = request_id


class ModelRequestsForbidden(ModelError):
    """A real provider request was attempted where the caller forbade them (e.g. in tests)."""


class RunsDatabaseError(ToolwireError):
    """A durable runs database cannot be used: unreachable, or no worker has set it up yet."""


class UsageLimitExceeded(ToolwireError):
    """A run reached one of its limits and was asked to raise rather than return partially.

    Attributes:
        limit: Which limit was reached: the run's `stop_reason` (e.g. `"token_limit"`).
        result: The partial run result, every tool call in it answered.
    """

    def __init__(self, limit: str, message: str, result: object = None) -> None:
        self.limit = limit
        self.result = result
        super().__init__(message)


class McpError(ToolwireError):
    """An MCP server failed a request; `code` is its JSON-RPC error code, when it sent one."""

    def __init__(self, message: str, *, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class McpProtocolError(McpError):
    """An MCP server answered with something the protocol does not allow."""


class McpAuthError(McpError):
    """The server refused our credentials (HTTP 401 or 403)."""


class InvalidTokenError(ToolwireError):
    """An access token presented to a toolwire MCP server is refused.

    Raised by token verifiers (`toolwire.mcp.ProtectedResource`); the server answers 401 with
    `error="invalid_token"` and `description` as the `error_description`, which the client sees,
    so it never quotes the token or secrets.
    """

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class McpConnectionError(McpError):
    """The connection to the server failed or dropped.

    Attributes:
        may_have_run: Whether the request may have reached the server before the failure.
    """

    def __init__(self, message: str, *, may_have_run: bool = False) -> None:
        super().__init__(message)
        self.may_have_run = may_have_run
