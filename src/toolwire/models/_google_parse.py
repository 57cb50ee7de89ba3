"""Gemini `generateContent` responses (the SDK's typed `GenerateContentResponse`) into toolwire types.

A whole response and the chunks of a streamed one go through the same `ResponseAssembler`, so a
streamed answer assembles into exactly the `Completion` the same answer parsed whole would give.

What becomes what:
- text parts become `TextBlock`s and `thought` parts `ReasoningBlock`s; a part that carries a
  `thoughtSignature` starts a block of its own and the signature is kept on it
  (`provider_state["thought_signature"]`, base64), so it goes back on the part it came on. Unsigned
  text that continues a block (stream chunks) is appended to it.
- `functionCall` parts become `ToolCallBlock`s (ids through `CallIds`: Gemini often sends none).
- `executableCode`/`codeExecutionResult` and `toolCall`/`toolResponse` (server-side tool
  invocations) become server tool blocks; they, and any part toolwire does not model, keep the
  whole part (`provider_state["part"]`) to be sent back exactly.
- `groundingMetadata` becomes `Citation`s on the text it supports, and is kept whole on the
  message's `provider_state` (it is response metadata, never sent back).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ModelResponseError, ModelStreamError
from ..messages import (
    AssistantMessage,
    AssistantPart,
    Citation,
    ReasoningBlock,
    ServerToolCallBlock,
    ServerToolResultBlock,
    TextBlock,
    ToolCallBlock,
)
from .base import (
    CallIds,
    Completion,
    FinishReason,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)

if TYPE_CHECKING:
    from google.genai import types

__all__ = ["BLOCKED", "ResponseAssembler", "decode_signature", "encode_signature"]

_FINISH: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "LANGUAGE": "other",
    "OTHER": "other",
    "IMAGE_OTHER": "other",
    "NO_IMAGE": "other",
}

BLOCKED = frozenset(k for k, v in _FINISH.items() if v == "content_filter")
"""Finish reasons that mean Gemini withheld the answer (safety, recitation, blocklists)."""

# A call Gemini could not produce: the turn carries no usable content, only what went wrong.
_FAILED_CALLS = ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL")

_SERVER_NAMES = {
    "executable_code": "code_execution",
    "code_execution_result": "code_execution",
}


def encode_signature(value: bytes) -> str:
    """A thought signature as the base64 text kept in `provider_state`."""
    return base64.b64encode(value).decode("ascii")


def decode_signature(value: object) -> bytes | None:
    """A stored signature back to its bytes (standard or URL-safe base64); `None` if unusable."""
    if isinstance(value, bytes):
        return value
    if not isinstance(value, str) or not value:
        return None
    text = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except ValueError:
        return None


def _enum(value: object) -> str | None:
    if value is None:
        return None
    raw = getattr(value, "value", value)
    return raw if isinstance(raw, str) else str(raw)


def _raw_part(part: types.Part) -> dict[str, Any]:
    # The SDK's own JSON form (camelCase, bytes as base64), which it reads back unchanged.
    return part.model_dump(mode="json", by_alias=True, exclude_none=True)


class ResponseAssembler:
    """Builds one assistant turn from a response, or from the chunks of a streamed one.

    `feed` takes each `GenerateContentResponse` and returns the stream events it carries;
    `completion` gives the result (and raises for an answer that cannot be used).
    """

    def __init__(self, ids: CallIds, provider: str, *, streamed: bool) -> None:
        self.ids = ids
        self.provider = provider
        self.streamed = streamed
        self.parts: list[AssistantPart] = []
        self._open: TextBlock | ReasoningBlock | None = None
        self._pieces: list[str] = []
        self.calls = 0
        self.response_id: str | None = None
        self.model_version: str | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.finish: str | None = None
        self.finish_message: str | None = None
        self.safety: list[types.SafetyRating] = []
        self.grounding: types.GroundingMetadata | None = None
        self.url_context: Any = None
        self.prompt_feedback: types.GenerateContentResponsePromptFeedback | None = None
        self.candidates_seen = False
        self.executions = 0
        self.raw: list[Any] = []

    # --- feeding -------------------------------------------------------------------------

    def feed(self, response: types.GenerateContentResponse) -> list[StreamEvent]:
        self.raw.append(response)
        if response.response_id and self.response_id is None:
            self.response_id = response.response_id
        if response.model_version and self.model_version is None:
            self.model_version = response.model_version
        if response.usage_metadata is not None:
            # Every chunk repeats the running totals: the last one counts.
            self.usage = response.usage_metadata
        if response.prompt_feedback is not None:
            self.prompt_feedback = response.prompt_feedback
        candidates = response.candidates
        if not candidates:
            return []
        self.candidates_seen = True
        candidate = candidates[0]
        events: list[StreamEvent] = []
        content = candidate.content
        if content is not None and content.parts:
            for part in content.parts:
                event = self._part(part)
                if event is None:
                    continue
                events.append(event)
                call = self.parts[-1]
                if isinstance(event, ToolCallDelta) and isinstance(call, ToolCallBlock):
                    # A call comes whole: its arguments follow its name as one delta.
                    events.append(ToolCallDelta(index=event.index, arguments=call.arguments))
        if candidate.finish_reason is not None:
            self.finish = _enum(candidate.finish_reason)
        if candidate.finish_message:
            self.finish_message = candidate.finish_message
        if candidate.safety_ratings:
            self.safety = list(candidate.safety_ratings)
        if candidate.grounding_metadata is not None:
            self.grounding = candidate.grounding_metadata
        if candidate.url_context_metadata is not None:
            self.url_context = candidate.url_context_metadata
        return events

    def _close(self) -> None:
        if self._open is not None:
            self._open.text = "".join(self._pieces)
            self._open = None
            self._pieces = []

    def _part(self, part: types.Part) -> StreamEvent | None:
        signature = part.thought_signature
        text = part.text
        if text is not None and part.function_call is None:
            thought = part.thought is True
            current = self._open
            if (
                signature is None
                and current is not None
                and isinstance(current, ReasoningBlock) == thought
            ):
                self._pieces.append(text)
            elif signature is None and not text:
                return None  # an empty unsigned part (streams end with one) carries nothing
            else:
                self._close()
                state = (
                    None
                    if signature is None
                    else {"thought_signature": encode_signature(signature)}
                )
                block: TextBlock | ReasoningBlock = (
                    ReasoningBlock(provider_state=state)
                    if thought
                    else TextBlock("", provider_state=state)
                )
                self.parts.append(block)
                self._open = block
                self._pieces = [text]
            if not text:
                return None
            return ReasoningDelta(text) if thought else TextDelta(text)
        self._close()
        call = part.function_call
        if call is not None:
            name = call.name
            if not name:
                raise ModelResponseError("Gemini sent a functionCall without a function name")
            index = self.calls
            self.calls += 1
            call_id = self.ids.take(call.id, self.response_id, index)
            state: dict[str, Any] | None = None
            if signature is not None:
                state = {"thought_signature": encode_signature(signature)}
            arguments = json.dumps(call.args if call.args is not None else {}, ensure_ascii=False)
            self.parts.append(ToolCallBlock(call_id, name, arguments, provider_state=state))
            return ToolCallDelta(index=index, id=call_id, name=name)
        self.parts.append(self._server_part(part))
        return None

    def _server_part(self, part: types.Part) -> AssistantPart:
        raw = _raw_part(part)
        state = {"part": raw}
        if part.executable_code is not None:
            code = part.executable_code
            self.executions += 1
            return ServerToolCallBlock(
                id=code.id or "",
                name="code_execution",
                arguments={"code": code.code, "language": _enum(code.language)},
                provider_state=state,
            )
        if part.code_execution_result is not None:
            result = part.code_execution_result
            outcome = _enum(result.outcome)
            return ServerToolResultBlock(
                call_id=result.id or "",
                name="code_execution",
                content={"outcome": outcome, "output": result.output},
                is_error=outcome not in (None, "OUTCOME_OK"),
                provider_state=state,
            )
        if part.tool_call is not None:
            invocation = part.tool_call
            return ServerToolCallBlock(
                id=invocation.id or "",
                name=(_enum(invocation.tool_type) or "tool").lower(),
                arguments=invocation.args,
                provider_state=state,
            )
        if part.tool_response is not None:
            response = part.tool_response
            return ServerToolResultBlock(
                call_id=response.id or "",
                name=(_enum(response.tool_type) or "tool").lower(),
                content=response.response,
                provider_state=state,
            )
        # Parts toolwire has no block for (images the model made, file data...) are kept whole.
        kind = next((k for k in raw if k != "thoughtSignature"), "part")
        return ServerToolResultBlock(call_id="", name=kind, content=None, provider_state=state)

    # --- the result ----------------------------------------------------------------------

    def completion(self) -> Completion:
        """The assembled answer.

        Raises:
            ModelStreamError: the prompt or the answer was blocked with nothing to keep, or
                Gemini could not produce a function call (`MALFORMED_FUNCTION_CALL`).
            ModelResponseError: no candidate, or a stream that ended before its finish reason.
        """
        self._close()
        if not self.candidates_seen:
            self._no_candidate()
        finish = self.finish
        if finish is None:
            if self.streamed:
                raise ModelResponseError(
                    "The Gemini stream ended before a finish reason: the answer is incomplete"
                )
            finish = "FINISH_REASON_UNSPECIFIED"
        if finish in _FAILED_CALLS:
            raise ModelStreamError(
                f"Gemini could not produce a valid function call ({finish})"
                + (f": {self.finish_message}" if self.finish_message else ""),
                provider=self.provider,
                code=finish,
                failed_generation=self.finish_message,
            )
        has_content = any(
            not isinstance(p, (TextBlock, ReasoningBlock)) or p.text.strip() for p in self.parts
        )
        if finish in BLOCKED and not has_content:
            raise ModelStreamError(
                f"Gemini withheld the answer ({finish}{self._categories()})"
                + (f": {self.finish_message}" if self.finish_message else ""),
                provider=self.provider,
                code=finish,
            )
        reason = _FINISH.get(finish, "other")
        if reason == "stop" and self.calls:
            reason = "tool_calls"
        self._cite()
        message_state: dict[str, Any] = {}
        if self.finish_message:
            message_state["finish_message"] = self.finish_message
        if finish in BLOCKED:
            message_state["blocked_categories"] = self._blocked()
        if self.grounding is not None:
            message_state["grounding_metadata"] = self.grounding.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
        if self.url_context is not None:
            message_state["url_context_metadata"] = self.url_context.model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
        message = AssistantMessage(
            parts=self.parts,
            provider=self.provider,
            model=self.model_version,
            id=self.response_id,
            provider_state=message_state or None,
        )
        return Completion(
            message=message,
            usage=self._usage(),
            finish_reason=reason,
            raw_finish_reason=finish,
            model=self.model_version,
            raw=self.raw[0] if len(self.raw) == 1 else self.raw,
        )

    def _no_candidate(self) -> None:
        feedback = self.prompt_feedback
        reason = _enum(feedback.block_reason) if feedback is not None else None
        if feedback is not None and reason:
            ratings = [_enum(r.category) or "?" for r in feedback.safety_ratings or () if r.blocked]
            detail = f": {', '.join(ratings)}" if ratings else ""
            message = f" ({feedback.block_reason_message})" if feedback.block_reason_message else ""
            raise ModelStreamError(
                f"Gemini blocked the prompt ({reason}{detail}){message}",
                provider=self.provider,
                code=reason,
            )
        raise ModelResponseError("Gemini answered without a candidate")

    def _blocked(self) -> list[str]:
        return [_enum(r.category) or "?" for r in self.safety if r.blocked]

    def _categories(self) -> str:
        blocked = self._blocked()
        return f": {', '.join(blocked)}" if blocked else ""

    def _usage(self) -> Usage:
        servers: dict[str, int] = {}
        if self.executions:
            servers["code_execution"] = self.executions
        if self.grounding is not None and self.grounding.web_search_queries:
            servers["web_search"] = len(self.grounding.web_search_queries)
        data = self.usage
        if data is None:
            return Usage(requests=1, server_tool_requests=servers)
        thoughts = data.thoughts_token_count or 0
        return Usage(
            # Tool-use prompt tokens (results of server tools read back) are billed as input;
            # thoughts as output.
            input_tokens=(data.prompt_token_count or 0) + (data.tool_use_prompt_token_count or 0),
            output_tokens=(data.candidates_token_count or 0) + thoughts,
            cache_read_tokens=data.cached_content_token_count or 0,
            reasoning_tokens=thoughts,
            requests=1,
            server_tool_requests=servers,
        )

    def _cite(self) -> None:
        grounding = self.grounding
        if grounding is None or not grounding.grounding_supports:
            return
        texts = [p for p in self.parts if isinstance(p, TextBlock)]
        if not texts:
            return
        chunks = grounding.grounding_chunks or []
        # Segments index the answer's text as UTF-8 bytes, across its text parts.
        starts: list[int] = []
        offset = 0
        for block in texts:
            starts.append(offset)
            offset += len(block.text.encode("utf-8"))
        for support in grounding.grounding_supports:
            segment = support.segment
            if segment is None:
                continue
            start = segment.start_index or 0
            end = segment.end_index if segment.end_index is not None else start
            where = _block_at(starts, start)
            block = texts[where]
            encoded = block.text.encode("utf-8")
            first = len(encoded[: start - starts[where]].decode("utf-8", errors="ignore"))
            last = len(encoded[: end - starts[where]].decode("utf-8", errors="ignore"))
            for index in support.grounding_chunk_indices or ():
                if not 0 <= index < len(chunks):
                    continue
                web = chunks[index].web
                context = chunks[index].retrieved_context
                source = web if web is not None else context
                block.citations.append(
                    Citation(
                        url=getattr(source, "uri", None),
                        title=getattr(source, "title", None),
                        cited_text=segment.text,
                        start_index=first,
                        end_index=last,
                        provider_state={"chunk_index": index},
                    )
                )


def _block_at(starts: Sequence[int], position: int) -> int:
    where = 0
    for index, start in enumerate(starts):
        if start <= position:
            where = index
    return where
