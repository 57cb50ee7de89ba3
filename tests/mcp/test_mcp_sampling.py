"""Sampling: real servers (the official SDK's, server-everything) ask toolwire's client for a
completion during a tool call, answered by toolwire's offline models."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_fixtures import (
    eventually,
    free_port,
    node_env,
    require_node_tool,
    serve_app,
    wait_for_port,
)
from sampling_server import PNG, WAV, build

from toolwire import Agent
from toolwire.mcp import McpClient, McpServerConfig, StdioServerParameters, from_mcp, run_agent
from toolwire.mcp.sampling import Sampler, SamplingRefused, SamplingRequest, answer
from toolwire.messages import (
    AssistantMessage,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from toolwire.models.base import Completion, ToolCall
from toolwire.models.testing import FunctionModel, ScriptedModel, TestModel
from toolwire.results import AudioPart, ImagePart, TextPart

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent


def app() -> Any:
    return build().streamable_http_app()


def report(text: str) -> dict[str, Any]:
    return json.loads(text)


async def test_a_request_reaches_the_model_with_every_option() -> None:
    model = ScriptedModel(["A short summary."], model_name="small-model")
    async with serve_app(app()) as url, McpClient(url, sampling=model) as client:
        result = await client.call_tool("summarize", {"text": "a long story"})
    assert not result.is_error, result.text
    answer = report(result.text)
    assert answer == {
        "role": "assistant",
        "content": {"type": "text", "text": "A short summary."},
        "model": "small-model",
        "stopReason": "endTurn",
    }
    (request,) = model.requests
    system, user = request.messages
    assert isinstance(system, SystemMessage) and system.text == "You are terse."
    assert isinstance(user, UserMessage) and user.text == "Summarize: a long story"
    assert request.settings.max_tokens == 200
    assert request.settings.temperature == 0.25
    assert request.settings.stop == ["END"]
    assert request.settings.extra == {}  # the server's metadata never reaches the provider
    assert request.tools == []


async def test_the_approval_sees_the_request_and_may_refuse() -> None:
    seen: list[SamplingRequest] = []

    def refuse(request: SamplingRequest) -> bool:
        seen.append(request)
        return False

    model = ScriptedModel(["never sent"])
    sampler = Sampler(model, approve=refuse)
    async with serve_app(app()) as url, McpClient(url, sampling=sampler) as client:
        result = await client.call_tool("summarize", {"text": "secret"})
    assert report(result.text) == {
        "error": {"code": -1, "message": "User rejected sampling request"}
    }
    assert model.requests == []
    (request,) = seen
    assert request.text == "Summarize: secret"
    assert request.server == url
    assert request.max_tokens == 200
    assert request.model_hints == ["small"]
    assert request.priorities == {"speedPriority": 0.8}
    assert request.include_context == "thisServer"
    assert request.metadata == {"trace": "abc"}


async def test_an_async_approval_lets_it_through_and_a_hint_picks_the_model() -> None:
    async def approve(request: SamplingRequest) -> bool:
        await anyio.lowlevel.checkpoint()
        return True

    big = ScriptedModel(["from the big one"], model_name="big-model")
    small = ScriptedModel(["from the small one"], model_name="tiny-SMALL-v2")
    sampler = Sampler(big, approve=approve, models=[small], max_tokens=64)
    async with serve_app(app()) as url, McpClient(url, sampling=sampler) as client:
        result = await client.call_tool("summarize", {"text": "x"})
    answer = report(result.text)
    assert answer["content"]["text"] == "from the small one"
    assert answer["model"] == "tiny-SMALL-v2"
    assert big.requests == []
    assert small.requests[0].settings.max_tokens == 64  # the sampler's cap beats the server's 200


async def test_a_review_sees_the_answer_and_may_withhold_it() -> None:
    reviewed: list[tuple[str, str]] = []

    async def keep_if_short(request: SamplingRequest, completion: Completion) -> bool:
        reviewed.append((request.text, completion.text))
        return len(completion.text) < 20

    def broken(request: SamplingRequest, completion: Completion) -> bool:
        raise RuntimeError("no screen")

    model = ScriptedModel(["Short.", "A much longer answer than allowed.", "Any."])
    async with serve_app(app()) as url:
        sampler = Sampler(model, review=keep_if_short)
        async with McpClient(url, sampling=sampler) as client:
            kept = report((await client.call_tool("summarize", {"text": "a"})).text)
            withheld = report((await client.call_tool("summarize", {"text": "b"})).text)
        async with McpClient(url, sampling=Sampler(model, review=broken)) as client:
            failed = report((await client.call_tool("summarize", {"text": "c"})).text)
    assert kept["content"]["text"] == "Short."
    assert withheld == {"error": {"code": -1, "message": "User rejected the sampled answer"}}
    assert reviewed == [
        ("Summarize: a", "Short."),
        ("Summarize: b", "A much longer answer than allowed."),
    ]
    assert failed["error"]["code"] == -32603
    assert "the sampling review failed: no screen" in failed["error"]["message"]


async def test_without_a_sampler_the_capability_is_absent_and_requests_are_refused() -> None:
    # The handshake era, where a server can ask at all (a sampler picks it by itself).
    async with serve_app(app()) as url, McpClient(url, protocol="legacy") as client:
        assert report((await client.call_tool("summarize", {"text": "check"})).text) == {
            "declared": False
        }
        refused = report((await client.call_tool("summarize", {"text": "anyway"})).text)
    assert refused["error"]["code"] == -32600
    assert "Sampling not supported" in refused["error"]["message"]


async def test_a_failing_model_or_approval_is_an_error_for_the_server_not_a_crash() -> None:
    def broken(messages: Any, request: Any) -> str:
        raise RuntimeError("overloaded")

    def confused(request: SamplingRequest) -> bool:
        raise RuntimeError("the terminal went away")

    async with serve_app(app()) as url:
        async with McpClient(url, sampling=FunctionModel(broken)) as client:
            first = report((await client.call_tool("summarize", {"text": "x"})).text)
            assert first["error"]["code"] == -32603
            assert (
                "the client's model failed: RuntimeError: overloaded" in first["error"]["message"]
            )
            # The session is unharmed: the next call goes through.
            assert (await client.call_tool("describe")).text
        sampler = Sampler(ScriptedModel(["unused"]), approve=confused)
        async with McpClient(url, sampling=sampler) as client:
            second = report((await client.call_tool("summarize", {"text": "x"})).text)
    assert second["error"]["code"] == -32603
    assert "the terminal went away" in second["error"]["message"]


async def test_images_audio_and_earlier_turns_reach_the_model() -> None:
    model = ScriptedModel(["A pixel and silence."])
    async with serve_app(app()) as url, McpClient(url, sampling=model) as client:
        result = await client.call_tool("describe")
    assert report(result.text)["content"]["text"] == "A pixel and silence."
    hello, earlier, question = model.requests[0].messages
    assert isinstance(hello, UserMessage) and hello.text == "Hello"
    assert isinstance(earlier, AssistantMessage) and earlier.text == "Hi, what is it?"
    assert isinstance(question, UserMessage)
    text, image, audio = question.content
    assert text == TextPart("What are these?")
    assert isinstance(image, ImagePart) and image.data == PNG and image.mime_type == "image/png"
    assert isinstance(audio, AudioPart) and audio.data == WAV


async def test_sampling_with_tools_round_trips_tool_use_and_results() -> None:
    model = ScriptedModel([("get_weather", {"city": "Recife"}), "Sunny in Recife, 31 C."])
    async with serve_app(app()) as url, McpClient(url, sampling=model) as client:
        result = await client.call_tool("forecast", {"city": "Recife"})
    answer = report(result.text)
    first, final = answer["first"], answer["final"]
    assert first["stopReason"] == "toolUse"
    (use,) = first["content"]
    assert use["type"] == "tool_use" and use["name"] == "get_weather"
    assert use["input"] == {"city": "Recife"}
    assert final["content"] == [{"type": "text", "text": "Sunny in Recife, 31 C."}]
    assert final["stopReason"] == "endTurn"

    asked, answered = model.requests
    assert [t.name for t in asked.tools] == ["get_weather"]
    assert asked.tools[0].parameters["required"] == ["city"]
    assert asked.tool_choice == "required"
    _, call, outcome = answered.messages
    assert isinstance(call, AssistantMessage)
    (block,) = call.parts
    assert isinstance(block, ToolCallBlock) and block.id == use["id"]
    assert isinstance(outcome, ToolResultMessage)
    assert outcome.call_id == use["id"] and outcome.name == "get_weather"
    assert outcome.text == "Recife: 31 C, sunny"


async def test_over_stdio_through_the_sdk_callback() -> None:
    params = StdioServerParameters(
        command=sys.executable, args=[str(HERE / "sampling_server.py")], env=None
    )
    seen: list[SamplingRequest] = []

    async def approve(request: SamplingRequest) -> bool:
        seen.append(request)
        return True

    model = ScriptedModel(["stdio summary", ("get_weather", {"city": "Lima"}), "Lima is grey."])
    async with McpClient(params, sampling=Sampler(model, approve=approve), timeout=30) as client:
        summary = report((await client.call_tool("summarize", {"text": "x"})).text)
        forecast = report((await client.call_tool("forecast", {"city": "Lima"})).text)
    assert summary["content"] == {"type": "text", "text": "stdio summary"}
    assert summary["model"] == "scripted"
    assert forecast["first"]["stopReason"] == "toolUse"
    assert forecast["final"]["content"][0]["text"] == "Lima is grey."
    assert seen[0].server == sys.executable
    assert model.requests[0].settings.max_tokens == 200

    async with McpClient(params, timeout=30) as client:
        refused = report((await client.call_tool("summarize", {"text": "x"})).text)
    assert refused["error"]["code"] == -32600


async def test_server_everything_samples_over_http_and_stdio() -> None:
    server = require_node_tool("mcp-server-everything")
    model = ScriptedModel(["Everything is fine.", "Still fine."], model_name="offline")
    port = free_port()
    env = {**node_env(), "PORT": str(port)}
    async with await anyio.open_process([server, "streamableHttp"], env=env) as proc:
        try:
            await wait_for_port(port)
            async with McpClient(f"http://127.0.0.1:{port}/mcp", sampling=model) as client:
                names = {s.name for s in await client.list_tools()}
                assert "trigger-sampling-request" in names
                result = await client.call_tool(
                    "trigger-sampling-request", {"prompt": "how are you?", "maxTokens": 30}
                )
        finally:
            proc.kill()
    assert not result.is_error, result.text
    assert '"text": "Everything is fine."' in result.text
    assert '"model": "offline"' in result.text
    system, user = model.requests[0].messages
    assert isinstance(system, SystemMessage) and system.text == "You are a helpful test server."
    assert user.text.endswith("how are you?")
    assert model.requests[0].settings.max_tokens == 30
    assert model.requests[0].settings.temperature == 0.7

    params = StdioServerParameters(command=server, args=["stdio"], env={"PATH": node_env()["PATH"]})
    async with McpClient(params, sampling=model, timeout=30) as client:
        result = await client.call_tool("trigger-sampling-request", {"prompt": "again"})
    assert '"text": "Still fine."' in result.text
    async with McpClient(params, timeout=30) as client:
        # Without a sampler the capability is not declared, so the tool is not offered.
        assert "trigger-sampling-request" not in {s.name for s in await client.list_tools()}


async def test_an_agent_loop_calls_a_tool_that_samples_through_from_mcp_and_the_registry() -> None:
    # The agent's model calls `summarize`; the server's sampling is answered by another model.
    sampler = ScriptedModel(["inner answer", "inner answer again"], model_name="sampler")
    async with serve_app(app()) as url:
        tools, client = await from_mcp(url, sampling=sampler)
        try:
            agent = Agent(TestModel(call_tools=["summarize"]), tools=tools)
            result = await agent.run("Summarize something")
        finally:
            await client.close()
        assert "inner answer" in result.text
        config = McpServerConfig(url, sampling=Sampler(sampler), prefix="srv")
        second = await run_agent(
            ScriptedModel([("srv_summarize", {"text": "t"}), "done"]), "go", servers=[config]
        )
    assert second.text == "done"
    (call,) = second.trace
    assert "inner answer again" in call.result
    assert [type(m) for m in sampler.requests[1].messages] == [SystemMessage, UserMessage]


def _stop(finish: Any, raw: str | None) -> str:
    from toolwire.mcp.sampling import _stop_reason  # pyright: ignore[reportPrivateUsage]

    completion = Completion(AssistantMessage([TextBlock("x")]), finish_reason=finish)
    completion.raw_finish_reason = raw
    return _stop_reason(completion)


def test_stop_reasons_map_onto_mcp_words() -> None:
    assert _stop("stop", None) == "endTurn"
    assert _stop("stop", "stop_sequence") == "stopSequence"
    assert _stop("length", "max_tokens") == "maxTokens"
    assert _stop("tool_calls", None) == "toolUse"
    assert _stop("content_filter", "SAFETY") == "SAFETY"


_USER = {"role": "user", "content": {"type": "text", "text": "hi"}}


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        (None, "params is not an object"),
        ({"messages": [_USER]}, "positive maxTokens"),
        ({"messages": [_USER], "maxTokens": True}, "positive maxTokens"),
        ({"messages": [], "maxTokens": 5}, "needs messages"),
        ({"messages": [{"role": "system", "content": []}], "maxTokens": 5}, "unknown role"),
        (
            {"messages": [{"role": "user", "content": {"type": "video"}}], "maxTokens": 5},
            "content of type 'video'",
        ),
        (
            {
                "messages": [{"role": "user", "content": {"type": "image", "data": "!!"}}],
                "maxTokens": 5,
            },
            "invalid base64",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": {"type": "tool_result", "toolUseId": "nope"}}
                ],
                "maxTokens": 5,
            },
            "answers no earlier tool_use",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "content": {"type": "image", "data": "", "mimeType": "x"}}
                ],
                "maxTokens": 5,
            },
            "an assistant turn cannot hold 'image'",
        ),
        ({"messages": [_USER], "maxTokens": 5, "stopSequences": "END"}, "stopSequences"),
        ({"messages": [_USER], "maxTokens": 5, "tools": [{"inputSchema": {}}]}, "no name"),
        ({"messages": [_USER], "maxTokens": 5, "toolChoice": {"mode": "any"}}, "unknown mode"),
    ],
)
async def test_a_malformed_request_is_refused_as_invalid_params(params: Any, problem: str) -> None:
    model = ScriptedModel(["unused"])
    with pytest.raises(SamplingRefused) as caught:
        await answer(Sampler(model), params)
    assert caught.value.code == -32602
    assert problem in str(caught.value)
    assert model.requests == []


async def test_a_tool_call_whose_arguments_are_not_an_object_is_refused() -> None:
    model = ScriptedModel([ToolCall("c1", "get_weather", "[1, 2]")])
    params = {
        "messages": [_USER],
        "maxTokens": 5,
        "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}],
    }
    with pytest.raises(SamplingRefused) as caught:
        await answer(Sampler(model), params)
    assert caught.value.code == -32603
    assert "not a JSON object" in str(caught.value)


# --- the CLI ----------------------------------------------------------------------------------


async def _toolwire(*args: str) -> tuple[int, str, str]:
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "toolwire.cli", *args], input=b"", check=False
        )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_toolwire_call_answers_with_the_sampling_model() -> None:
    async with serve_app(app()) as url:
        code, out, err = await _toolwire(
            "call", url, "summarize", "text=news", "--sampling-model", "test", "--sampling", "allow"
        )
        assert code == 0, err
        answer = report(out)
        assert answer["model"] == "test"
        assert answer["content"]["text"].startswith("The offline test model")
        # Without --sampling-model nothing is offered; the server's request is refused.
        code, out, err = await _toolwire("call", url, "summarize", "text=check")
        assert code == 0, err
        assert report(out) == {"declared": False}


async def test_toolwire_run_answers_with_the_runs_own_model_when_allowed() -> None:
    async with serve_app(app()) as url:
        code, out, err = await _toolwire(
            "run", "Summarize the news", "--mcp", url, "--sampling", "allow"
        )
        assert code == 0, err
        assert "summarize" in err
        assert '"model": "test"' in out
        assert "The offline test model" in out
        # No terminal to ask at: `ask` (the default) offers no sampling.
        code, out, err = await _toolwire("run", "check", "--mcp", url)
        assert code == 0, err
        assert '{"declared": false}' in out


def _relay_server(release: anyio.Event, entered: anyio.Event, go: anyio.Event) -> Any:
    """`held` waits for `release`; `late` asks for a completion on the session's GET stream (no
    related request) once `go` is set, so its question needs a GET stream still open then."""
    server = MCPServer("relay")

    @server.tool()
    async def held() -> str:
        await release.wait()
        return "held done"

    @server.tool()
    async def late(ctx: Context) -> str:
        entered.set()
        await go.wait()
        message = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text="hi")
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await ctx.session.create_message([message], max_tokens=20)
        content = result.content
        assert isinstance(content, types.TextContent)
        return content.text

    return server.streamable_http_app()


async def test_a_call_still_running_keeps_the_get_stream_after_a_concurrent_call_ends() -> None:
    # The session has one GET stream (a second one gets 409), opened by the first call in
    # flight. When that call was answered first, it closed the stream while a concurrent call
    # was still running: the server's question for that call was then dropped and the call
    # waited for ever (`toolwire run` calling two sampling tools at once hung, one run in three).
    release, entered, go = anyio.Event(), anyio.Event(), anyio.Event()
    answers: dict[str, str] = {}
    model = ScriptedModel(["from the client"])
    async with (
        serve_app(_relay_server(release, entered, go)) as url,
        McpClient(url, sampling=model) as client,
    ):

        async def call(name: str) -> None:
            answers[name] = (await client.call_tool(name)).text

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call, "held")
                tg.start_soon(call, "late")
                await entered.wait()
                release.set()
                # Let `held` be answered (only `late` is left on the shared stream) and what
                # it does afterwards settle before the server asks its question for `late`.
                # anyio's wait_all_tasks_blocked alone can wait for ever: it re-checks every
                # 0.1 s, in step with uvicorn's 0.1 s tick, and may find that task awake each time.
                session: Any = getattr(client.transport, "_session", None)
                await eventually(lambda: getattr(session._listening, "calls", 0) == 1)
                with anyio.move_on_after(1):
                    await anyio.wait_all_tasks_blocked()
                go.set()
    assert answers == {"held": "held done", "late": "from the client"}


async def test_asking_on_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from rich.console import Console

    from toolwire._cli_sampling import sampler_for

    shown = io.StringIO()
    stopped: list[bool] = []
    model = ScriptedModel(["yes answer"])
    sampler = sampler_for(
        model,
        "ask",
        Console(file=shown, width=200),
        interactive=True,
        before=lambda: stopped.append(True),
    )
    assert sampler is not None
    assert sampler_for(model, "ask", Console(file=shown), interactive=False) is None
    assert sampler_for(model, "deny", Console(file=shown), interactive=True) is None
    async with serve_app(app()) as url, McpClient(url, sampling=sampler) as client:
        monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
        yes = report((await client.call_tool("summarize", {"text": "a"})).text)
        monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
        no = report((await client.call_tool("summarize", {"text": "b"})).text)
    assert yes["content"]["text"] == "yes answer"
    assert no["error"]["code"] == -1
    text = shown.getvalue()
    assert f"The MCP server {url} asks scripted for a completion:" in text
    assert "system: You are terse." in text
    assert "user: Summarize: a" in text
    assert "(up to 200 tokens; hints: small)" in text
    assert "Let the model answer? [y/N]" in text
    assert stopped == [True, True]
