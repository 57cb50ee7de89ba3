"""Served tools that talk back: progress, log lines, sampling and elicitation, in both eras.

The handshake era (2025-11-25) sends the client requests while the tool waits; 2026-07-28
answers `input_required` and runs the tool again with the answer. Both are driven by the
official SDK's client over real HTTP.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Literal

import anyio
import httpx2
import mcp_types
import pytest
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_fixtures import HERE, ROOT, serve_app

from mcp import Client, StdioServerParameters
from toolwire import ToolContext, ToolError, tool
from toolwire.mcp import McpClient, create_app
from toolwire.mcp.elicitation import Elicitation, ElicitationAnswer
from toolwire.mcp.sampling import Sampler, SamplingRequest
from toolwire.mcp.server import AUTH_SCOPE_KEY
from toolwire.messages import AssistantMessage, TextBlock, UserMessage
from toolwire.models.testing import ScriptedModel
from toolwire.results import ImagePart, TextPart
from toolwire.tools import AuthInfo

pytestmark = pytest.mark.anyio

ERAS = ["legacy", "2026-07-28"]

FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "colour": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
    },
    "required": ["name"],
}


def _text(result: mcp_types.CallToolResult) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


class Recorder:
    """The client's side: what it was asked, and what it answers."""

    def __init__(self, elicit_answer: dict[str, Any] | None = None) -> None:
        self.sampled: list[mcp_types.CreateMessageRequestParams] = []
        self.elicited: list[mcp_types.ElicitRequestParams] = []
        self.elicit_answer = elicit_answer or {"action": "accept", "content": {"name": "Ada"}}
        self.logs: list[tuple[str, Any]] = []
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def sample(
        self, context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        self.sampled.append(params)
        return mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="forty-two"),
            model="client-model",
            stop_reason="endTurn",
        )

    async def elicit(
        self, context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.elicited.append(params)
        return mcp_types.ElicitResult.model_validate(self.elicit_answer)

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.data))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))


RUNS: list[str] = []


def talking_tools() -> list[Any]:
    @tool
    async def chatty(ctx: ToolContext) -> str:
        """Logs at three levels and reports progress."""
        RUNS.append("chatty")
        await ctx.log("debug", "too fine to show")
        await ctx.log("info", "started")
        for step in (1, 2, 3):
            await ctx.report_progress(step, 3, f"step {step}")
        await ctx.log("warning", {"left": 0}, logger="toolwire.test")
        return "done"

    @tool
    async def ask_model(question: str, ctx: ToolContext) -> str:
        """Asks the client's model."""
        RUNS.append("ask_model")
        answer = await ctx.sample(
            [
                UserMessage(
                    [TextPart(question), ImagePart(data=b"\x89PNG", mime_type="image/png")]
                ),
                AssistantMessage([TextBlock("Let me think.")]),
                UserMessage.of("Go on."),
            ],
            max_tokens=64,
            system_prompt="Be brief.",
            temperature=0.2,
            model_hints=["small"],
        )
        return f"{answer.model}: {answer.text} ({answer.stop_reason})"

    @tool
    async def ask_user(ctx: ToolContext) -> str:
        """Asks the user for a form."""
        RUNS.append("ask_user")
        answer = await ctx.elicit("Who are you?", FORM)
        return f"{answer.action} {answer.content}"

    @tool
    async def ask_both(ctx: ToolContext) -> str:
        """Asks the model, then the user: the second question must not ask the first again."""
        RUNS.append("ask_both")
        sampled = await ctx.sample("Name a colour", max_tokens=10)
        answer = await ctx.elicit(f"The model says {sampled.text}. Your name?", FORM)
        return f"{sampled.text} / {answer.content}"

    @tool
    async def careful(ctx: ToolContext) -> str:
        """Turns a refusal into its own answer."""
        try:
            await ctx.sample("anything", max_tokens=5)
        except ToolError as exc:
            return f"no sampling: {exc}"
        return "sampled"

    return [chatty, ask_model, ask_user, ask_both, careful]


@pytest.mark.parametrize("era", ERAS)
async def test_progress_and_logs_reach_the_client(era: str) -> None:
    seen = Recorder()
    RUNS.clear()
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode=era, logging_callback=seen.log, log_level="info") as client,
    ):
        if era == "legacy":
            # The handshake era's way to choose a level (deprecated in 2026-07-28).
            with pytest.warns(MCPDeprecationWarning):
                await client.set_logging_level("info")
        result = await client.call_tool("chatty", {}, progress_callback=seen.on_progress)
        assert _text(result) == "done"
        # Notifications ride the request's stream, so they are all in before the answer.
        assert seen.logs == [("info", "started"), ("warning", {"left": 0})]
        assert seen.progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert RUNS == ["chatty"]


async def test_a_higher_level_drops_more_and_each_session_keeps_its_own() -> None:
    quiet, loud = Recorder(), Recorder()
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode="legacy", logging_callback=quiet.log) as first,
        Client(url, mode="legacy", logging_callback=loud.log) as second,
    ):
        with pytest.warns(MCPDeprecationWarning):
            await first.set_logging_level("error")
        await first.call_tool("chatty", {})
        await second.call_tool("chatty", {})
    assert quiet.logs == []
    # No level chosen: everything is sent, as the SDK's servers do.
    assert [level for level, _ in loud.logs] == ["debug", "info", "warning"]


@pytest.mark.parametrize("era", ERAS)
async def test_sampling_asks_the_clients_model(era: str) -> None:
    seen = Recorder()
    RUNS.clear()
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode=era, sampling_callback=seen.sample) as client,
    ):
        result = await client.call_tool("ask_model", {"question": "What is six times seven?"})
    assert not result.is_error, _text(result)
    assert _text(result) == "client-model: forty-two (endTurn)"
    (asked,) = seen.sampled
    assert asked.max_tokens == 64
    assert asked.system_prompt == "Be brief."
    assert asked.temperature == 0.2
    assert asked.model_preferences is not None
    assert [h.name for h in asked.model_preferences.hints or []] == ["small"]
    roles = [m.role for m in asked.messages]
    assert roles == ["user", "assistant", "user"]
    first = asked.messages[0].content_as_list
    assert [c.type for c in first] == ["text", "image"]
    # 2026-07-28 runs the tool again once the answer is in.
    assert (["ask_model"] if era == "legacy" else ["ask_model", "ask_model"]) == RUNS


@pytest.mark.parametrize("era", ERAS)
async def test_elicitation_fills_defaults_and_checks_the_answer(era: str) -> None:
    seen = Recorder({"action": "accept", "content": {"name": "Ada"}})
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode=era, elicitation_callback=seen.elicit) as client,
    ):
        result = await client.call_tool("ask_user", {})
        assert _text(result) == "accept {'name': 'Ada', 'colour': 'blue'}"
        (asked,) = seen.elicited
        assert isinstance(asked, mcp_types.ElicitRequestFormParams)
        assert asked.message == "Who are you?"
        assert asked.requested_schema == FORM

        seen.elicit_answer = {"action": "accept", "content": {"name": "Ada", "age": -3}}
        broken = await client.call_tool("ask_user", {})
        assert broken.is_error
        assert "does not match the requested schema (age:" in _text(broken)

        seen.elicit_answer = {"action": "decline"}
        assert _text(await client.call_tool("ask_user", {})) == "decline None"


@pytest.mark.parametrize("era", ERAS)
async def test_two_questions_in_one_call(era: str) -> None:
    seen = Recorder({"action": "accept", "content": {"name": "Bo"}})
    RUNS.clear()
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(
            url, mode=era, sampling_callback=seen.sample, elicitation_callback=seen.elicit
        ) as client,
    ):
        result = await client.call_tool("ask_both", {})
    assert _text(result) == "forty-two / {'name': 'Bo', 'colour': 'blue'}"
    # Each question is asked once: 2026-07-28 answers the first from the sealed state.
    assert len(seen.sampled) == 1
    assert len(seen.elicited) == 1
    assert len(RUNS) == (1 if era == "legacy" else 3)


async def test_a_handshake_client_without_the_capability_gets_an_error_result() -> None:
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode="legacy") as client,
    ):
        result = await client.call_tool("ask_model", {"question": "hi"})
        assert result.is_error
        assert _text(result) == "The MCP client offers no sampling (no `sampling` capability)"
        # A tool may catch the refusal and answer on its own.
        caught = await client.call_tool("careful", {})
        assert _text(caught).startswith("no sampling: The MCP client offers no sampling")
        user = await client.call_tool("ask_user", {})
        assert user.is_error
        assert "no form elicitation" in _text(user)


async def test_a_2026_client_without_the_capability_gets_error_32021() -> None:
    """2026-07-28 makes it the request's error (MissingRequiredClientCapability), naming what
    is missing, even for a tool that would catch a `ToolError`."""
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode="2026-07-28") as client,
    ):
        for name, needed in (
            ("ask_model", {"sampling": {}}),
            ("careful", {"sampling": {}}),
            ("ask_user", {"elicitation": {"form": {}}}),
        ):
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, {"question": "hi"} if name == "ask_model" else {})
            assert refused.value.error.code == mcp_types.MISSING_REQUIRED_CLIENT_CAPABILITY
            assert refused.value.error.data == {"requiredCapabilities": needed}


async def test_a_refusal_is_an_error_result() -> None:
    async def refuse(
        context: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.ErrorData:
        return mcp_types.ErrorData(code=-1, message="User rejected sampling request")

    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode="legacy", sampling_callback=refuse) as client,
    ):
        result = await client.call_tool("ask_model", {"question": "hi"})
    assert result.is_error
    assert _text(result) == (
        "The MCP client refused the sampling request: User rejected sampling request"
    )


async def test_a_client_that_never_answers_times_out() -> None:
    never = anyio.Event()

    async def hang(
        context: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        await never.wait()
        raise AssertionError("unreachable")

    async with (
        serve_app(create_app(talking_tools(), ask_timeout=0.3)) as url,
        Client(url, mode="legacy", elicitation_callback=hang) as client,
    ):
        with anyio.fail_after(20):
            result = await client.call_tool("ask_user", {})
    assert result.is_error
    assert _text(result) == (
        "The MCP client did not answer the elicitation request within 0.3 seconds"
    )


async def test_a_tampered_request_state_is_refused() -> None:
    seen = Recorder()
    async with (
        serve_app(create_app(talking_tools())) as url,
        Client(url, mode="2026-07-28", sampling_callback=seen.sample) as client,
    ):
        first = await client.session.call_tool(
            "ask_model", {"question": "hi"}, allow_input_required=True
        )
        assert isinstance(first, mcp_types.InputRequiredResult)
        assert first.request_state is not None
        assert first.input_requests is not None
        (key,) = first.input_requests
        assert first.input_requests[key].method == "sampling/createMessage"
        # The state is sealed: its answers cannot be read, nor made up.
        assert "forty-two" not in first.request_state
        answer = mcp_types.CreateMessageResult(
            role="assistant",
            content=mcp_types.TextContent(type="text", text="made up"),
            model="m",
        )
        forged = first.request_state[:-4] + "AAAA"
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "ask_model",
                {"question": "hi"},
                input_responses={key: answer},
                request_state=forged,
                allow_input_required=True,
            )
        # State minted for other arguments does not carry over either.
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await client.session.call_tool(
                "ask_model",
                {"question": "something else"},
                input_responses={key: answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
        done = await client.session.call_tool(
            "ask_model",
            {"question": "hi"},
            input_responses={key: answer},
            request_state=first.request_state,
            allow_input_required=True,
        )
        assert isinstance(done, mcp_types.CallToolResult)
        assert _text(done) == "m: made up (None)"


async def test_outside_mcp_the_helpers_say_so() -> None:
    tools = {t.name: t for t in talking_tools()}
    # Progress and logs go nowhere; questions need a client.
    assert (await tools["chatty"].invoke({})).text == "done"
    result = await tools["ask_model"].invoke({"question": "hi"})
    assert result.is_error
    assert "Sampling needs an MCP client" in result.text
    assert "Elicitation needs an MCP client" in (await tools["ask_user"].invoke({})).text


async def test_with_json_answers_the_tool_talks_on_the_session_stream() -> None:
    """`json_response=True` leaves no room before the answer: the session's GET stream (which
    the SDK's client keeps open) carries the notifications and the questions instead."""
    seen = Recorder()
    heard = anyio.Event()

    async def log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        await seen.log(params)
        if len(seen.logs) == 3:
            heard.set()

    async with (
        serve_app(create_app(talking_tools(), json_response=True)) as url,
        Client(url, mode="legacy", logging_callback=log, sampling_callback=seen.sample) as client,
    ):
        done = await client.call_tool("chatty", {}, progress_callback=seen.on_progress)
        assert _text(done) == "done"
        with anyio.fail_after(10):
            await heard.wait()  # another stream than the answer's: it may come in after it
        assert [level for level, _ in seen.logs] == ["debug", "info", "warning"]
        sampled = await client.call_tool("ask_model", {"question": "hi"})
        assert _text(sampled) == "client-model: forty-two (endTurn)"


@pytest.mark.parametrize(
    ("protocol", "json_response"),
    [("legacy", None), ("modern", None), ("modern", True)],
    ids=["legacy", "modern", "modern-json"],
)
async def test_toolwire_client_answers_in_both_eras(
    protocol: Literal["legacy", "modern"], json_response: bool | None
) -> None:
    """toolwire's own client with a sampler and an elicitation handler: by requests in the
    handshake era, by `input_required` rounds in 2026-07-28 (two questions, two rounds), those
    rounds also with JSON answers (the single-request path, sealing and opening the state)."""
    model = ScriptedModel(["teal"], model_name="client-side")
    asked: list[Elicitation] = []
    RUNS.clear()

    async def handler(request: Elicitation) -> ElicitationAnswer:
        asked.append(request)
        return ElicitationAnswer("accept", {"name": "Cy"})

    async with (
        serve_app(create_app(talking_tools(), json_response=json_response)) as url,
        McpClient(url, protocol=protocol, sampling=Sampler(model), elicitation=handler) as client,
    ):
        assert client.protocol_version == ("2026-07-28" if protocol == "modern" else "2025-11-25")
        result = await client.call_tool("ask_both")
    assert result.text == "teal / {'name': 'Cy', 'colour': 'blue'}"
    assert [a.message for a in asked] == ["The model says teal. Your name?"]
    assert len(RUNS) == (1 if protocol == "legacy" else 3)


async def test_toolwire_client_refusing_in_2026_gets_an_error_result() -> None:
    async def refuse(request: SamplingRequest) -> bool:
        return False

    sampler = Sampler(ScriptedModel(["never"]), approve=refuse)
    async with (
        serve_app(create_app(talking_tools())) as url,
        McpClient(url, protocol="modern", sampling=sampler) as client,
    ):
        result = await client.call_tool("ask_model", {"question": "hi"})
    assert result.is_error
    assert "User rejected sampling request" in result.text


async def test_a_stateless_server_cannot_ask_in_the_handshake_era() -> None:
    seen = Recorder()
    async with (
        serve_app(create_app(talking_tools(), stateless=True)) as url,
        Client(url, mode="legacy", sampling_callback=seen.sample) as client,
    ):
        result = await client.call_tool("ask_model", {"question": "hi"})
    assert result.is_error
    assert _text(result).startswith("The MCP client cannot be sent a sampling request here")
    assert seen.sampled == []


async def test_over_stdio_tools_talk_and_resources_and_prompts_are_served() -> None:
    seen = Recorder()
    # This checkout's toolwire, whatever the environment's default is.
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(HERE / "conformance_server.py")],
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": os.environ.get("PATH", "")},
    )
    async with Client(
        params, mode="legacy", sampling_callback=seen.sample, logging_callback=seen.log
    ) as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("info")
        logged = await client.call_tool("test_tool_with_logging", {})
        assert not logged.is_error
        assert [data for _, data in seen.logs] == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        sampled = await client.call_tool("test_sampling", {"prompt": "Six times seven?"})
        assert _text(sampled) == "LLM response: forty-two"
        (content,) = (await client.read_resource("test://template/7/data")).contents
        assert json.loads(getattr(content, "text", "")) == {
            "id": "7",
            "templateTest": True,
            "data": "Data for ID: 7",
        }
        got = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        assert (
            getattr(got.messages[0].content, "text", "")
            == "Prompt with arguments: arg1='a', arg2='b'"
        )


def _as_user(app: Any) -> Any:
    """Stand in for the OAuth guard: the caller named by `x-user` is the validated token's."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            user = dict(scope["headers"]).get(b"x-user", b"").decode()
            scope[AUTH_SCOPE_KEY] = AuthInfo(
                subject=user, client_id="app", scopes=frozenset(), issuer="https://as.example"
            )
        await app(scope, receive, send)

    return wrapped


async def test_sealed_state_opens_only_for_the_user_it_was_minted_for() -> None:
    """Behind OAuth the state (holding the user's earlier answers) is bound to the caller:
    another user replaying it is refused."""
    seen = Recorder()
    answer = mcp_types.CreateMessageResult(
        role="assistant", content=mcp_types.TextContent(type="text", text="x"), model="m"
    )
    async with (
        serve_app(_as_user(create_app(talking_tools()))) as url,
        httpx2.AsyncClient(headers={"x-user": "ann"}) as ann_http,
        httpx2.AsyncClient(headers={"x-user": "bob"}) as bob_http,
    ):

        def client(http: httpx2.AsyncClient) -> Client:
            transport = streamable_http_client(url, http_client=http)
            return Client(transport, mode="2026-07-28", sampling_callback=seen.sample)

        async with client(ann_http) as ann, client(bob_http) as bob:
            first = await ann.session.call_tool(
                "ask_model", {"question": "hi"}, allow_input_required=True
            )
            assert isinstance(first, mcp_types.InputRequiredResult)
            assert first.input_requests is not None
            (key,) = first.input_requests
            retry: dict[str, Any] = {
                "input_responses": {key: answer},
                "request_state": first.request_state,
                "allow_input_required": True,
            }
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await bob.session.call_tool("ask_model", {"question": "hi"}, **retry)
            done = await ann.session.call_tool("ask_model", {"question": "hi"}, **retry)
            assert isinstance(done, mcp_types.CallToolResult)
            assert _text(done) == "m: x (None)"
