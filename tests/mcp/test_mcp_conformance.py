"""The official conformance suite and the reference `server-everything`, both from npm.

Run `.ci/mcp-setup.sh` first; without it these tests skip locally and fail in CI. Each scenario's
checks are read one by one: a summary can pass against a server that lacks the tool (the
`tools-call-error` checks only look for `isError`), so the tests also assert that the
scenario's tool really ran in toolwire's server.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import anyio
import pytest
from conformance_server import RAN
from conformance_server import conformance_tools as fixture_tools
from mcp_fixtures import (
    free_port,
    node_env,
    read_checks,
    require_node_tool,
    run_client_scenario,
    serve_app,
    verdicts,
    wait_for_port,
)

from toolwire.mcp import McpClient, McpTool, StdioServerParameters, create_app
from toolwire.results import (
    ImagePart,
    ResourceLinkPart,
    ResourcePart,
    TextPart,
)

pytestmark = pytest.mark.anyio

_PLAIN_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "json_schema_2020_12_tool",
}


def conformance_tools() -> list[Any]:
    """The fixture server's tools that never talk back, served alone: the server scenarios pass
    on a plain-tool server too (JSON answers, no SSE)."""
    return [t for t in fixture_tools() if t.name in _PLAIN_TOOLS]


SCHEMA_CHECKS = {"tool-found", "$schema", "$defs", "additionalProperties"}

# Each scenario: the checks it must report (all SUCCESS), and the tool that must have run.
SERVER_SCENARIOS: dict[str, tuple[set[str], str | None]] = {
    "server-initialize": ({"server-initialize"}, None),
    "ping": ({"ping"}, None),
    "tools-list": ({"tools-list"}, None),
    "tools-call-simple-text": ({"tools-call-simple-text"}, "test_simple_text"),
    "tools-call-image": ({"tools-call-image"}, "test_image_content"),
    "tools-call-audio": ({"tools-call-audio"}, "test_audio_content"),
    "tools-call-embedded-resource": ({"tools-call-embedded-resource"}, "test_embedded_resource"),
    "tools-call-mixed-content": ({"tools-call-mixed-content"}, "test_multiple_content_types"),
    "tools-call-error": ({"tools-call-error"}, "test_error_handling"),
    "json-schema-2020-12": ({f"json-schema-2020-12-{c}" for c in SCHEMA_CHECKS}, None),
    "dns-rebinding-protection": (
        {"localhost-host-rebinding-rejected", "localhost-host-valid-accepted"},
        None,
    ),
}


@pytest.mark.parametrize("scenario", list(SERVER_SCENARIOS))
async def test_server_scenario(scenario: str, tmp_path: Path) -> None:
    cli = require_node_tool("conformance")
    RAN.clear()
    async with serve_app(create_app(conformance_tools(), name="toolwire-conformance")) as url:
        with anyio.fail_after(90):
            done = await anyio.run_process(
                [cli, "server", "--url", url, "--scenario", scenario, "-o", str(tmp_path)],
                env=node_env(),
                check=False,
            )
    results = verdicts(read_checks(tmp_path))
    expected_checks, expected_tool = SERVER_SCENARIOS[scenario]
    assert set(results) == expected_checks, results
    assert set(results.values()) == {"SUCCESS"}, results
    assert done.returncode == 0, done.stdout.decode()
    if expected_tool is not None:
        assert [expected_tool] == RAN


CLIENT_SCENARIOS = {
    "initialize": {"mcp-client-initialization"},
    "tools_call": {"tool-add-numbers"},
    "sse-retry": {
        "client-sse-graceful-reconnect",
        "client-sse-retry-timing",
        "client-sse-last-event-id",
    },
    # The server asks on the session's GET stream; the client accepts an empty form, and the
    # schema's defaults must fill it.
    "elicitation-sep1034-client-defaults": {
        f"client-elicitation-sep1034-{kind}-default"
        for kind in ("string", "integer", "number", "enum", "boolean")
    },
}


# The checks every authorization-code scenario reports: discovery, PKCE, the token exchange.
_PKCE = {
    "pkce-code-challenge-sent",
    "pkce-code-verifier-sent",
    "pkce-s256-method-used",
    "pkce-verifier-matches-challenge",
}
_CODE_FLOW = {
    "prm-pathbased-requested",
    "authorization-server-metadata",
    "authorization-request",
    "token-request",
    *_PKCE,
}
_REGISTERED = {*_CODE_FLOW, "client-registration", "valid-bearer-token"}
_RESOURCE = {
    "resource-parameter-consistency",
    "resource-parameter-in-authorization",
    "resource-parameter-in-token",
    "resource-parameter-valid-uri",
    "token-endpoint-auth-method",
}

# The 2025-11-25 authorization scenarios (and the draft ones, which pass too).
AUTH_SCENARIOS: dict[str, set[str]] = {
    "auth/metadata-default": _REGISTERED,
    "auth/metadata-var1": _REGISTERED,
    "auth/metadata-var2": _REGISTERED,
    "auth/metadata-var3": _REGISTERED,
    "auth/basic-cimd": {*_CODE_FLOW, "cimd-client-id-used", "valid-bearer-token"},
    "auth/scope-from-www-authenticate": {*_REGISTERED, "scope-from-www-authenticate"},
    "auth/scope-from-scopes-supported": {*_REGISTERED, "scope-from-scopes-supported"},
    "auth/scope-omitted-when-undefined": {*_REGISTERED, "scope-omitted-when-undefined"},
    "auth/scope-step-up": {*_REGISTERED, "scope-step-up-initial", "scope-step-up-escalation"},
    # The server never accepts the token: the client must stop re-authorizing, and so never
    # presents a token the server calls valid.
    "auth/scope-retry-limit": {*_CODE_FLOW, "client-registration", "scope-retry-limit"},
    "auth/token-endpoint-auth-basic": _REGISTERED | _RESOURCE,
    "auth/token-endpoint-auth-post": _REGISTERED | _RESOURCE,
    "auth/token-endpoint-auth-none": _REGISTERED | _RESOURCE,
    "auth/pre-registration": {*_CODE_FLOW, "pre-registration-auth", "valid-bearer-token"},
    "auth/2025-03-26-oauth-endpoint-fallback": {
        "client-registration",
        "authorization-request",
        "token-request",
        "valid-bearer-token",
    },
    "auth/resource-mismatch": {"prm-pathbased-requested", "resource-mismatch-rejected"},
    "auth/offline-access-scope": {
        *_CODE_FLOW,
        "sep-2207-offline-access-requested",
        "valid-bearer-token",
    },
    "auth/offline-access-not-supported": {*_REGISTERED, "sep-2207-offline-access-not-requested"},
    # An extension: the client signs a JWT with its private key instead of sending a secret.
    "auth/client-credentials-jwt": {
        "prm-pathbased-requested",
        "authorization-server-metadata",
        "client-credentials-jwt-verified",
        "token-request",
        "valid-bearer-token",
    },
    # An extension: the identity provider's ID token is exchanged for an ID-JAG (RFC 8693), which
    # the authorization server trades for an access token (RFC 7523 JWT bearer grant).
    "auth/cross-app-access-complete-flow": {
        "prm-pathbased-requested",
        "authorization-server-metadata",
        "complete-flow-token-exchange",
        "token-request",
        "complete-flow-jwt-bearer",
        "valid-bearer-token",
    },
    "auth/client-credentials-basic": {
        "prm-pathbased-requested",
        "authorization-server-metadata",
        "client-credentials-basic-auth",
        "token-request",
        "valid-bearer-token",
    },
}

# Scenarios where the client must give up: its exit status says nothing about conformance.
_CLIENT_GIVES_UP = {"auth/scope-retry-limit", "auth/resource-mismatch"}


@pytest.mark.parametrize("scenario", list(CLIENT_SCENARIOS) + list(AUTH_SCENARIOS))
async def test_client_scenario(scenario: str, tmp_path: Path) -> None:
    results, returncode, client_errors = await run_client_scenario(scenario, tmp_path)
    expected = CLIENT_SCENARIOS.get(scenario) or AUTH_SCENARIOS[scenario]
    # Every check the scenario defines must be there and pass, not just "nothing failed".
    assert set(results) == expected, results
    assert set(results.values()) == {"SUCCESS"}, results
    assert returncode == 0, client_errors
    if scenario in _CLIENT_GIVES_UP:
        assert "McpAuthError" in client_errors, client_errors


async def test_cross_app_access_with_a_tampered_id_token_is_refused(tmp_path: Path) -> None:
    results, returncode, client_errors = await run_client_scenario(
        "auth/cross-app-access-complete-flow", tmp_path, env={"TAMPER_ID_TOKEN": "1"}
    )
    assert results["complete-flow-token-exchange"] == "FAILURE", results
    assert results["complete-flow-jwt-bearer"] == "FAILURE", results  # never reached
    assert "valid-bearer-token" not in results
    assert returncode != 0
    assert "McpAuthError" in client_errors
    assert "refused the token exchange (400): Invalid ID token" in client_errors


async def test_client_refuses_legacy_metadata_naming_another_issuer(tmp_path: Path) -> None:
    """The 2025-03-26 back-compat scenario serves metadata at the server's root whose `issuer`
    is a different URL. RFC 8414 section 3.3 (and the SDK, since SEP-2468) says to reject such
    metadata, against mix-up attacks; toolwire does, so the scenario's later checks never run.
    """
    results, returncode, client_errors = await run_client_scenario(
        "auth/2025-03-26-oauth-metadata-backcompat", tmp_path
    )
    assert results["authorization-server-metadata"] == "SUCCESS", results
    missing = {"client-registration", "authorization-request", "token-request"}
    assert {results[c] for c in missing} == {"FAILURE"}, results
    assert returncode != 0
    assert "McpAuthError" in client_errors
    assert "issuer mismatch" in client_errors


# --- server-everything ----------------------------------------------------------------------


async def test_server_everything_over_http() -> None:
    server = require_node_tool("mcp-server-everything")
    port = free_port()
    env = {**node_env(), "PORT": str(port)}
    async with await anyio.open_process([server, "streamableHttp"], env=env) as proc:
        try:
            await wait_for_port(port)
            async with McpClient(f"http://127.0.0.1:{port}/mcp") as client:
                specs = {s.name: s for s in await client.list_tools()}
                assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(specs)
                assert specs["echo"].annotations.read_only_hint is True
                assert specs["get-structured-content"].output_schema is not None

                tools = {t.name: t for t in await client.tools(prefix="ev")}
                echo = tools["ev_echo"]
                assert isinstance(echo, McpTool)
                assert (await echo.invoke({"message": "hi"})).text == "Echo: hi"
                assert "3" in (await tools["ev_get-sum"].invoke({"a": 1, "b": 2})).text

                image = await client.call_tool("get-tiny-image")
                (picture,) = [p for p in image.content if isinstance(p, ImagePart)]
                assert picture.mime_type == "image/png"
                assert picture.data is not None
                assert picture.data.startswith(b"\x89PNG")

                links = await client.call_tool("get-resource-links", {"count": 2})
                assert len([p for p in links.content if isinstance(p, ResourceLinkPart)]) == 2

                reference = await client.call_tool("get-resource-reference")
                assert any(isinstance(p, ResourcePart) for p in reference.content)

                weather = await client.call_tool("get-structured-content", {"location": "Chicago"})
                assert isinstance(weather.structured, dict)
                assert "temperature" in weather.structured

                annotated = await client.call_tool(
                    "get-annotated-message", {"messageType": "error", "includeImage": True}
                )
                assert [type(p) for p in annotated.content] == [TextPart, ImagePart]
        finally:
            proc.kill()


async def test_server_everything_over_stdio() -> None:
    server = require_node_tool("mcp-server-everything")
    params = StdioServerParameters(command=server, args=["stdio"], env={"PATH": node_env()["PATH"]})
    async with McpClient(params, timeout=30) as client:
        specs = await client.list_tools()
        assert "get-sum" in {s.name for s in specs}
        result = await client.call_tool("get-tiny-image")
        assert any(isinstance(p, ImagePart) for p in result.content)
        encoded = base64.b64encode(b"toolwire").decode()
        echoed = await client.call_tool("echo", {"message": encoded})
        assert encoded in echoed.text
