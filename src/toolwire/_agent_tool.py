"""`AgentTool`: a whole agent as a tool another agent calls (`Agent.as_tool`).

The call runs the agent as a sub-run of the calling run (see `_delegation`): its spending rolls up
into the caller's result, its trace nests under the call, its budgets are cut to what the caller
has left, a durable caller checkpoints its steps, and its answer (JSON for a typed answer) is the
call's result. Whatever goes wrong in the sub-run, the caller gets an error result.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, cast

import pydantic
import pydantic_core

from . import _delegation, _loop  # pyright: ignore[reportPrivateUsage]
from ._config import LoopConfig
from ._handoff import AgentLike
from ._run_result import RunResult
from .results import TextPart, ToolResult, error_result
from .tools import FunctionTool, ToolContext, tool

__all__ = ["AgentTool", "agent_tool"]

_TEXT_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "What to ask the agent."}},
    "required": ["input"],
    "additionalProperties": False,
}


class AgentTool(_delegation.DelegatingTool):
    """An agent run as a tool; `Agent.as_tool` builds one.

    Attributes:
        agent: The agent each call runs.
    """

    def __init__(self, agent: AgentLike, wrapped: FunctionTool) -> None:
        super().__init__(wrapped)
        self.agent = agent


def agent_tool(
    agent: AgentLike,
    *,
    name: str | None = None,
    description: str | None = None,
    input: Any = str,
    requires_approval: bool = False,
) -> AgentTool:
    """See `Agent.as_tool`."""
    tool_name = name or agent.name
    text = description or f"Ask the {agent.name!r} agent; it answers with its final result."

    async def ask(prompt: str, ctx: ToolContext) -> ToolResult:
        return await _run_agent(agent, prompt, ctx)

    if input is str or input is None:

        async def execute_text(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            return await ask(args["input"], ctx)

        inner = tool(
            parameters=_TEXT_INPUT,
            execute=execute_text,
            name=tool_name,
            description=text,
            requires_approval=requires_approval,
        )
    elif isinstance(input, type) and issubclass(input, pydantic.BaseModel):

        async def execute_model(args: pydantic.BaseModel, ctx: ToolContext) -> ToolResult:
            return await ask(args.model_dump_json(), ctx)

        inner = tool(
            parameters=input,
            execute=execute_model,
            name=tool_name,
            description=text,
            requires_approval=requires_approval,
        )
    else:
        shape = cast(Any, input)
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(shape)
        schema: dict[str, Any] = adapter.json_schema()
        if schema.get("type") != "object":
            raise TypeError(
                f"as_tool(input=...) takes str, a Pydantic model or a type whose JSON Schema is "
                f"an object; {input!r} gives {schema.get('type')!r}"
            )

        async def execute_typed(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            value = adapter.validate_python(args)
            return await ask(adapter.dump_json(value).decode(), ctx)

        inner = tool(
            parameters=schema,
            execute=execute_typed,
            name=tool_name,
            description=text,
            requires_approval=requires_approval,
        )
    return AgentTool(agent, inner)


def _sub_config(
    agent: AgentLike, ctx: ToolContext, parent: _delegation.RunNode | None
) -> LoopConfig:
    config: LoopConfig = agent.loop_config()
    changes: dict[str, Any] = {}
    if config.deps is None:
        changes["deps"] = ctx.deps  # the caller's deps, unless the agent has its own
    # A limit reached ends the sub-run with a result the caller reads, never an exception.
    limits = dataclasses.replace(config.limits, raise_on_limit=False)
    if parent is not None:
        # One budget across the tree: the sub-run may spend what the callers have left.
        limits = dataclasses.replace(limits, **parent.remaining(config.limits))
        changes["backend"] = parent.state.config.backend
    changes["limits"] = limits
    return dataclasses.replace(config, **changes)


async def _run_agent(agent: AgentLike, prompt: str, ctx: ToolContext) -> ToolResult:
    parent = _delegation.current()
    call_id = ctx.call_id or ctx.tool_name
    try:
        config = _sub_config(agent, ctx, parent)
    except Exception as exc:
        return error_result(exc)
    launch = _delegation.Launch(parent, call_id) if parent is not None else None
    token = _delegation.launching(launch) if launch is not None else None
    resuming = parent.resuming.pop(call_id, None) if parent is not None else None
    try:
        if resuming is not None:
            result = await _loop.run(
                config,
                None,
                resuming.messages,
                approvals=resuming.approvals,
                results=resuming.results,
            )
        else:
            result = await _loop.run(config, prompt, None)
    except Exception as exc:
        # The caller's model reads what went wrong; the caller's run goes on.
        return error_result(f"the {agent.name!r} agent failed: {type(exc).__name__}: {exc}")
    finally:
        if token is not None:
            _delegation.landed(token)
        if launch is not None and launch.child is not None and parent is not None:
            parent.absorb(launch.child, call_id)
    if result.pending and result.stop_reason in ("approval_required", "external_calls"):
        if parent is None:
            return error_result(
                f"the {agent.name!r} agent waits for a decision, which only a run can ask for"
            )
        # The caller's run stops after this turn and hands the decision to its own caller.
        parent.paused[call_id] = result
        return ToolResult(content=[TextPart("(waiting for a decision)")])
    return _answer(agent, result)


def _answer(agent: AgentLike, result: RunResult) -> ToolResult:
    if result.stop_reason != "completed":
        detail = f" ({result.refusal})" if result.refusal else ""
        return error_result(
            f"the {agent.name!r} agent stopped before answering: "
            f"{result.stop_reason.replace('_', ' ')}{detail}"
        )
    if result.output is not None:
        data = pydantic_core.to_jsonable_python(result.output)
        return ToolResult(content=[TextPart(json.dumps(data))], structured=data)
    return ToolResult(content=[TextPart(result.text)])
