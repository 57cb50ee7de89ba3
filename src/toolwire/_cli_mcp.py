"""`toolwire tools` and `toolwire call`: list and call the tools of an MCP server.

Loaded only when one of these commands runs (`cli` knows them by name); connecting to the server
(and the hints when that fails) is `_cli_connect`, which `run` shares.
"""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ._cli_common import (
    CliError,
    err,
    out,
    preview,
    resolve_model,
    run_async,
)
from ._cli_connect import connected, mcp_client
from ._cli_cost import print_costs
from ._cli_options import (
    HeaderOption,
    LoginOption,
    LoginPortOption,
    SamplingModeOption,
    TokenDirOption,
    TokenOption,
)
from ._validate import SchemaValidator
from .errors import McpAuthError, McpConnectionError, McpError, SchemaError
from .results import AudioPart, ImagePart, ResourcePart, ToolResult, json_representation

__all__ = [
    "add_mcp_commands",
    "call",
    "describe_parameters",
    "list_tools",
]


def _reject_constant(name: str) -> Any:
    # NaN and Infinity are not JSON: sent on, they would make the request itself invalid.
    raise ValueError(f"{name} is not JSON")


def _parse_pairs(pairs: Sequence[str], raw_json: str | None) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if raw_json:
        try:
            loaded = json.loads(raw_json)
        except ValueError as exc:
            raise CliError(f"--args-json is not valid JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise CliError("--args-json must be a JSON object")
        args.update(loaded)  # pyright: ignore[reportUnknownArgumentType]
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"arguments are key=value, got {pair!r}")
        try:
            args[key] = json.loads(value, parse_constant=_reject_constant)  # numbers, lists, ...
        except ValueError:
            args[key] = value  # anything else is a string
    return args


def _prefer_strings(
    args: dict[str, Any], pairs: Sequence[str], schema: dict[str, Any] | None
) -> dict[str, Any]:
    """Keep a `key=value` as the string typed where the tool wants a string there.

    `cpf=52998224725` or `zip=01310` must reach a string parameter as text, not as a number.
    """
    properties: Any = (schema or {}).get("properties")
    if not isinstance(properties, dict):
        return args
    properties = typing.cast(dict[str, Any], properties)
    # A property's own `$ref`s point into the root schema's definitions.
    defs = {k: schema[k] for k in ("$defs", "definitions") if schema and k in schema}
    out = dict(args)
    for pair in pairs:
        key, _, raw = pair.partition("=")
        prop = properties.get(key)
        if isinstance(out.get(key), str) or not isinstance(prop, dict | bool):
            continue
        try:
            check = SchemaValidator(
                {**typing.cast(dict[str, Any], prop), **defs} if isinstance(prop, dict) else prop
            )
        except SchemaError:
            continue
        if not check.is_valid(out[key]) and check.is_valid(raw):
            out[key] = raw
    return out


def _print_result(result: ToolResult, save_dir: Path | None) -> None:
    for i, part in enumerate(result.content):
        if isinstance(part, ImagePart | AudioPart) and part.data is not None:
            # Bracketed notes are plain text: markup=False, or rich would read them as tags.
            if save_dir is None:
                out.print(
                    f"[{part.kind} {part.mime_type}, {len(part.data)} bytes; --save DIR writes it]",
                    markup=False,
                )
                continue
            save_dir.mkdir(parents=True, exist_ok=True)
            path = save_dir / f"part{i}.{_extension(part.mime_type)}"
            path.write_bytes(part.data)
            out.print(f"[{part.kind} saved to {path}]", markup=False)
        elif isinstance(part, ResourcePart) and part.blob is not None:
            out.print(f"[resource {part.uri}: {len(part.blob)} bytes]", markup=False)
        else:
            out.print(ToolResult(content=[part]).text, markup=False)


def _result_dict(result: ToolResult) -> dict[str, Any]:
    """A tool result as JSON data: binary parts as base64, the structured value as given."""
    content = [
        {k: v for k, v in json_representation(part).items() if v is not None}
        for part in result.content
    ]
    return {"content": content, "structured": result.structured, "is_error": result.is_error}


def _extension(mime_type: str) -> str:
    """A file extension for a MIME type: `image/svg+xml` -> `svg`, `audio/wav; codecs=1` -> `wav`."""
    subtype = mime_type.split(";")[0].strip().split("/")[-1].split("+")[0].removeprefix("x-")
    cleaned = "".join(c for c in subtype if c.isalnum() or c in "-.")
    return cleaned or "bin"


# --- the commands ------------------------------------------------------------------------------


def list_tools(
    url: Annotated[str | None, typer.Argument(help="The server's MCP URL.")] = None,
    stdio: Annotated[str | None, typer.Option(help="Start a stdio server: 'command args'.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    token: TokenOption = None,
    header: HeaderOption = None,
    login: LoginOption = False,
    login_port: LoginPortOption = 33418,
    token_dir: TokenDirOption = None,
    cost: Annotated[
        bool, typer.Option("--cost", help="Tokens each definition costs, per dialect.")
    ] = False,
) -> None:
    """List an MCP server's tools."""
    client = mcp_client(url, stdio, token, header or [], login_port if login else None, token_dir)

    async def main() -> list[Any]:
        async with connected(client, url, token, header or []):
            return list(await client.list_tools())

    specs = run_async(main)
    if cost:
        print_costs(specs, out, as_json=as_json)
        return
    if as_json:
        rows = [
            {
                "name": s.name,
                "description": s.description,
                "annotations": _annotation_dict(s.annotations),
                "inputSchema": s.input_schema,
            }
            for s in specs
        ]
        out.print_json(json.dumps(rows))
        return
    table = Table(title=f"{len(specs)} tools")
    table.add_column("name", style="bold")
    table.add_column("parameters")
    table.add_column("annotations")
    table.add_column("description")
    for spec in specs:
        notes = ", ".join(k for k, v in _annotation_dict(spec.annotations).items() if v is True)
        # Text cells: a description's brackets are not rich markup.
        table.add_row(
            Text(spec.name),
            Text(describe_parameters(spec.input_schema)),
            Text(notes),
            Text(preview(spec.description or "", 90)),
        )
    out.print(table)


def describe_parameters(schema: Any) -> str:
    """`name: type` per parameter, `?` after an optional one: `expression: string, tz?: string`."""
    if not isinstance(schema, dict):
        return ""
    schema = typing.cast(dict[str, Any], schema)
    properties: Any = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    required: Any = schema.get("required")
    required_names: set[str] = (
        set(typing.cast(list[str], required)) if isinstance(required, list) else set()
    )
    described: list[str] = []
    for name, prop in typing.cast(dict[str, Any], properties).items():
        mark = "" if name in required_names else "?"
        described.append(f"{name}{mark}: {_type_of(prop)}")
    return ", ".join(described)


def _type_of(prop: Any) -> str:
    if not isinstance(prop, dict):
        return "any"
    node = typing.cast(dict[str, Any], prop)
    if "enum" in node and isinstance(node["enum"], list):
        return " | ".join(json.dumps(v) for v in typing.cast(list[Any], node["enum"]))
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in typing.cast(list[Any], kind))
    if isinstance(kind, str):
        if kind == "array" and isinstance(node.get("items"), dict):
            return f"array of {_type_of(node['items'])}"
        return kind
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            return " | ".join(_type_of(b) for b in typing.cast(list[Any], branches))
    return "object" if "$ref" in node or "properties" in node else "any"


def _annotation_dict(annotations: Any) -> dict[str, Any]:
    fields = ("title", "read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
    return {
        f: getattr(annotations, f, None)
        for f in fields
        if getattr(annotations, f, None) is not None
    }


def call(
    target: Annotated[str, typer.Argument(help="The server's MCP URL, or the tool with --stdio.")],
    rest: Annotated[list[str] | None, typer.Argument(help="TOOL then key=value arguments.")] = None,
    stdio: Annotated[str | None, typer.Option(help="Start a stdio server: 'command args'.")] = None,
    raw_json: Annotated[
        str | None, typer.Option("--args-json", help="Arguments as a JSON object.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    save: Annotated[
        Path | None, typer.Option(help="Write images and audio to this folder.")
    ] = None,
    token: TokenOption = None,
    header: HeaderOption = None,
    login: LoginOption = False,
    login_port: LoginPortOption = 33418,
    token_dir: TokenDirOption = None,
    sampling_model: Annotated[
        str | None,
        typer.Option(
            help="provider:model-name (or 'test') that answers the server's sampling requests; "
            "without it they are refused."
        ),
    ] = None,
    sampling: SamplingModeOption = "ask",
) -> None:
    """Call one tool of an MCP server and print its result (exit 1 when it is an error).

    A server asking for input is asked on the terminal; one asking for a completion is answered
    by --sampling-model, after a yes on the terminal (--sampling).
    """
    words = list(rest or [])
    if stdio is None:
        url = target
        if not words:
            raise CliError("name the tool to call after the URL")
        tool_name, pairs = words[0], words[1:]
    else:
        url, tool_name, pairs = None, target, words
    args = _parse_pairs(pairs, raw_json)
    client = mcp_client(url, stdio, token, header or [], login_port if login else None, token_dir)
    from ._cli_elicit import ask_on_terminal

    client.elicitation = ask_on_terminal  # a server asking for input asks the person here
    if sampling_model is not None:
        from ._cli_sampling import sampler_for

        answering, _ = resolve_model(sampling_model, None, None)
        interactive = sys.stdin.isatty() and err.is_terminal
        client.sampling = sampler_for(answering, sampling, err, interactive=interactive)

    async def main() -> ToolResult:
        async with connected(client, url, token, header or []):
            try:
                # The listing gives the tool's schema (for key=value) and its annotations.
                specs = {spec.name: spec for spec in await client.list_tools()}
            except (McpAuthError, McpConnectionError):
                raise
            except McpError:
                specs = {}  # some servers list badly yet call fine: let the call decide
            found = specs.get(tool_name)
            schema = found.input_schema if found is not None else None
            return await client.call_tool(tool_name, _prefer_strings(args, pairs, schema))

    result = run_async(main)
    if as_json:
        out.print_json(json.dumps(_result_dict(result)))
    else:
        _print_result(result, save)
    if result.is_error:
        raise typer.Exit(1)


def add_mcp_commands(app: typer.Typer) -> None:
    """Register `tools` and `call` as commands of `app`."""
    app.command("tools", epilog="Example: toolwire tools http://127.0.0.1:8000/mcp")(list_tools)
    app.command(
        epilog="Example: toolwire call http://127.0.0.1:8000/mcp calculator expression='2*21'"
    )(call)
