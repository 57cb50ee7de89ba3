"""The client the conformance suite drives: `python conformance_client.py SERVER_URL`.

It connects with toolwire's `McpClient`, lists the tools and calls each one, exiting non-zero
when anything fails. The suite names the scenario in `MCP_CONFORMANCE_SCENARIO` and, where a
scenario hands the client credentials, passes them in `MCP_CONFORMANCE_CONTEXT` (JSON).

For the `auth/` scenarios the suite's authorization server approves at once: its authorization
endpoint redirects straight back with a code. The client signs in as the CLI does, with a
`LoopbackLogin` listening for that redirect, and `browse` plays the browser by following the
authorization URL's redirects, which end at the listener. In the elicitation scenario a person
accepts the form without filling anything in, so the schema's defaults must be applied.

In the cross-app access scenario the suite hands over an ID token from its identity provider.
`CrossAppAccess` wants the MCP server's authorization server as configuration; a deployment
knows it, and here it is read from the server's protected-resource metadata, as the suite
expects a client to learn it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from toolwire.mcp import McpClient
from toolwire.mcp.auth import ClientCredentials, CrossAppAccess, OAuth
from toolwire.mcp.elicitation import Elicitation, ElicitationAnswer
from toolwire.mcp.login import LoopbackLogin

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document the suite's `auth/basic-cimd` scenario expects."""


def browse(url: str) -> None:
    """A browser: off it goes, following redirects, while the caller listens for the last one."""

    def visit() -> None:
        with httpx2.Client() as http:
            http.get(url, follow_redirects=True)

    threading.Thread(target=visit, daemon=True).start()


async def authorization_server(url: str) -> str:
    """The first authorization server the MCP server's protected-resource metadata names."""
    parts = urlsplit(url)
    where = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    async with httpx2.AsyncClient() as http:
        metadata = (await http.get(where)).raise_for_status().json()
    return metadata["authorization_servers"][0]


def _maybe_tampered(token: str) -> str:
    """The ID token, its signature broken when a test asks (`TAMPER_ID_TOKEN=1`)."""
    if not os.environ.get("TAMPER_ID_TOKEN"):
        return token
    head, _, signature = token.rpartition(".")
    return f"{head}.{signature[::-1]}"


async def auth_for(
    scenario: str, login: LoopbackLogin, url: str
) -> OAuth | ClientCredentials | CrossAppAccess | None:
    if not scenario.startswith("auth/"):
        return None
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario == "auth/cross-app-access-complete-flow":
        return CrossAppAccess(
            context["client_id"],
            context["client_secret"],
            issuer=await authorization_server(url),
            idp_token_endpoint=context["idp_token_endpoint"],
            id_token=_maybe_tampered(context["idp_id_token"]),
            idp_client_id=context["idp_client_id"],
        )
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(context["client_id"], context["client_secret"])
    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(
            context["client_id"],
            private_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "RS256"),
        )
    person = {"authorize": login.authorize, "redirect_uri": login.redirect_uri}
    if scenario == "auth/pre-registration":
        return OAuth(
            **person, client_id=context["client_id"], client_secret=context["client_secret"]
        )
    return OAuth(**person, client_metadata_url=CLIENT_METADATA_URL)


async def fill_nothing_in(request: Elicitation) -> ElicitationAnswer:
    return ElicitationAnswer("accept", {})


async def main(url: str) -> int:
    failures = 0
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    # Bounds against a hang, not timings: under xdist the suite's node process, this client and
    # the login's browser thread share busy cores with other tests.
    async with (
        LoopbackLogin(port=0, open_url=browse, announce=lambda _: None, timeout=60) as login,
        McpClient(
            url,
            client_name="toolwire-conformance",
            timeout=60,
            auth=await auth_for(scenario, login, url),
            elicitation=fill_nothing_in if "elicitation" in scenario else None,
        ) as client,
    ):
        for spec in await client.list_tools():
            result = await client.call_tool(spec.name, ARGUMENTS.get(spec.name, {}))
            print(f"{spec.name}: {'ERROR ' if result.is_error else ''}{result.text}")
            failures += result.is_error
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
