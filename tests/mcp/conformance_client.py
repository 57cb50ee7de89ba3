"""The client the conformance suite drives: `python conformance_client.py SERVER_URL`.

It connects with toolwire's `McpClient`, lists the tools and calls each one, exiting non-zero
when anything fails. The suite names the scenario in `MCP_CONFORMANCE_SCENARIO` and, where a
scenario hands the client credentials, passes them in `MCP_CONFORMANCE_CONTEXT` (JSON).

For the `auth/` scenarios the suite's authorization server approves at once: its authorization
endpoint redirects straight back with a code, so `follow_authorization` plays the person by
fetching the authorization URL and returning where it redirects.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import httpx2

from toolwire.mcp import McpClient
from toolwire.mcp.auth import ClientCredentials, OAuth

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 2, "b": 3}}

CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document the suite's `auth/basic-cimd` scenario expects."""


async def follow_authorization(url: str) -> str:
    async with httpx2.AsyncClient() as http:
        answer = await http.get(url, follow_redirects=False)
    location = answer.headers.get("location")
    if answer.status_code not in (301, 302, 303, 307, 308) or not location:
        raise RuntimeError(f"the authorization endpoint answered {answer.status_code}, no redirect")
    return location


def auth_for(scenario: str) -> OAuth | ClientCredentials | None:
    if not scenario.startswith("auth/"):
        return None
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(context["client_id"], context["client_secret"])
    if scenario == "auth/pre-registration":
        return OAuth(
            authorize=follow_authorization,
            client_id=context["client_id"],
            client_secret=context["client_secret"],
        )
    return OAuth(authorize=follow_authorization, client_metadata_url=CLIENT_METADATA_URL)


async def main(url: str) -> int:
    failures = 0
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    async with McpClient(
        url, client_name="toolwire-conformance", timeout=20, auth=auth_for(scenario)
    ) as client:
        for spec in await client.list_tools():
            result = await client.call_tool(spec.name, ARGUMENTS.get(spec.name, {}))
            print(f"{spec.name}: {'ERROR ' if result.is_error else ''}{result.text}")
            failures += result.is_error
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[-1]))
