"""Azure OpenAI (`azure:DEPLOYMENT`): OpenAI's wire APIs behind Azure's endpoints and credentials.

Nothing here maps messages: Chat Completions is `OpenAIChatModel` and the Responses v1 API is
`OpenAIResponsesModel`, both with provider `"azure"` and an `openai.AsyncAzureOpenAI` client, so
each replays exactly the state it replays for OpenAI. What Azure adds is kept here:

- Where: the resource endpoint (`endpoint=` or `AZURE_OPENAI_ENDPOINT`). Chat Completions goes to
  `{endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...` (`api_version=`,
  `AZURE_OPENAI_API_VERSION` or `OPENAI_API_VERSION`); the Responses API to the version-less v1
  route `{endpoint}/openai/v1/responses` with the deployment as the model (an `api_version=`
  argument, e.g. `"preview"`, is added when given; the environment's dated versions are not).
- Who: an API key (`api_key=` or `AZURE_OPENAI_API_KEY`, sent as `api-key`) or a Microsoft Entra
  ID token provider (`token_provider=`: any callable returning a token, or an awaitable of one,
  called before each request and sent as `Authorization: Bearer`). With `azure-identity`:
  `get_bearer_token_provider(DefaultAzureCredential(), "https://cognitiveservices.azure.com/.default")`.
- Native tools: a Chat Completions deployment sends a request with a native tool spec through the
  v1 Responses API of the same resource, deployment and credentials (as `api="responses"` would);
  `native_tools_via_responses=False` refuses them instead.
- The content filter: a turn Azure's filter stopped raises `ModelStreamError` with code
  `content_filter`, naming the filtered categories (and severities) and keeping the partial text
  in `failed_generation`; a prompt the filter refused is a `ModelHTTPError` (400) whose message
  names the categories.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias

from ..errors import MissingApiKeyError, ModelError
from ._content_filter import filtered_categories
from .openai_chat import OpenAIChatModel
from .openai_responses import OpenAIResponsesModel

__all__ = ["TokenProvider", "azure", "filtered_categories"]

TokenProvider: TypeAlias = Callable[[], "str | Awaitable[str]"]
"""A Microsoft Entra ID token source: returns a bearer token, or an awaitable of one."""

_VERSION_VARS = ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION")


def azure(
    deployment: str,
    *,
    api: Literal["chat-completions", "responses"] = "chat-completions",
    endpoint: str | None = None,
    api_key: str | None = None,
    token_provider: TokenProvider | None = None,
    api_version: str | None = None,
    timeout: float | None = None,
    max_retries: int = 0,
    **options: Any,
) -> OpenAIChatModel | OpenAIResponsesModel:
    """A model deployed on Azure OpenAI.

    Args:
        deployment: The deployment's name (it is the model Azure runs).
        api: `"chat-completions"` or `"responses"` (the v1 Responses API).
        endpoint: The resource, e.g. `"https://my-resource.openai.azure.com"`;
            `AZURE_OPENAI_ENDPOINT` when not given.
        api_key: The resource key; `AZURE_OPENAI_API_KEY` when neither it nor a token provider
            is given.
        token_provider: A Microsoft Entra ID token source, instead of a key.
        api_version: The API version; for Chat Completions `AZURE_OPENAI_API_VERSION` or
            `OPENAI_API_VERSION` when not given.
        timeout: Seconds per request.
        max_retries: The SDK's own retries (0: the caller decides).
        **options: Passed to the model (`OpenAIChatModel`: `profile`, by default
            `profiles.AZURE_CHAT`, and `native_tools_via_responses`; `OpenAIResponsesModel`:
            `store`, `encrypted_reasoning`, `previous_response_id`), `client=` (a ready
            `openai.AsyncAzureOpenAI`, which stays the caller's), or to the client built here
            (`default_headers`, `http_client`...).

    Raises:
        ValueError: no endpoint, no credentials or both kinds, no API version for Chat
            Completions, or an unknown `api`.
    """
    model_keys = _MODEL_OPTIONS.get(api)
    if model_keys is None:
        raise ValueError(f"azure api must be 'chat-completions' or 'responses', not {api!r}")
    model_options = {k: options.pop(k) for k in list(options) if k in model_keys}
    client = options.pop("client", None)
    if client is not None:  # the caller's client: used as it is, never rebuilt nor closed
        if api == "chat-completions":
            return OpenAIChatModel(deployment, provider="azure", client=client, **model_options)
        return OpenAIResponsesModel(
            deployment, provider="azure", client=client, content_filter_error=True, **model_options
        )
    endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT") or None
    if endpoint is None:
        raise ValueError(
            "azure needs the resource endpoint: pass endpoint=... or set AZURE_OPENAI_ENDPOINT"
        )
    if api_key is not None and token_provider is not None:
        raise ValueError("azure takes an API key or a token provider, not both")
    if api_key is None and token_provider is None:
        api_key = os.environ.get("AZURE_OPENAI_API_KEY") or None
        if api_key is None:
            # Named by its variable; a token provider (Microsoft Entra ID) is the other way in.
            raise MissingApiKeyError("azure", "AZURE_OPENAI_API_KEY")
    auth: dict[str, Any] = {"api_key": api_key} if api_key is not None else {}
    if token_provider is not None:
        auth["azure_ad_token_provider"] = _checked(token_provider)
    root = endpoint.rstrip("/")
    client_options: dict[str, Any] = {**auth, "max_retries": max_retries, **options}
    if timeout is not None:
        client_options["timeout"] = timeout
    if api == "chat-completions":
        version = api_version or next(
            (v for v in (os.environ.get(n) for n in _VERSION_VARS) if v), None
        )
        if version is None:
            raise ValueError(
                "azure Chat Completions needs an API version: pass api_version=... or set "
                "AZURE_OPENAI_API_VERSION or OPENAI_API_VERSION (e.g. 2024-10-21)"
            )
        responses_options = dict(client_options)
        client_options.update(azure_endpoint=root, azure_deployment=deployment, api_version=version)
        return OpenAIChatModel(
            deployment,
            provider="azure",
            client_factory=_factory(client_options),
            # Native tools go to the v1 Responses route of the same resource and credentials;
            # the Chat route's dated version means nothing there.
            responses_factory=lambda: _responses(deployment, root, None, responses_options, {}),
            **model_options,
        )
    return _responses(deployment, root, api_version, client_options, model_options)


def _responses(
    deployment: str,
    root: str,
    api_version: str | None,
    client_options: dict[str, Any],
    model_options: dict[str, Any],
) -> OpenAIResponsesModel:
    from openai import omit

    # The v1 route takes no dated version; the SDK's Azure client insists on one, so the query
    # parameter is left out of each request unless the caller named a version.
    client_options = {
        **client_options,
        "base_url": f"{root}/openai/v1",
        "api_version": api_version or "v1",
    }
    query: dict[str, object] = {} if api_version else {"api-version": omit}
    return OpenAIResponsesModel(
        deployment,
        provider="azure",
        client_factory=_factory(client_options),
        query=query,
        content_filter_error=True,
        **model_options,
    )


_MODEL_OPTIONS = {
    "chat-completions": frozenset({"profile", "native_tools_via_responses"}),
    "responses": frozenset({"store", "encrypted_reasoning", "previous_response_id"}),
}


def _factory(options: dict[str, Any]) -> Callable[[], Any]:
    from openai import AsyncAzureOpenAI

    return lambda: AsyncAzureOpenAI(**options)


def _checked(provider: TokenProvider) -> Callable[[], Awaitable[str]]:
    async def token() -> str:
        value: Any = provider()
        if inspect.isawaitable(value):
            value = await value
        if not isinstance(value, str) or not value:
            raise ModelError(
                "the Azure token provider returned no token (expected a non-empty str)"
            )
        return value

    return token
