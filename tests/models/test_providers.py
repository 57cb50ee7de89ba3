"""Building a model checks what it needs up front: the provider's key, named by its variable."""

from __future__ import annotations

import pytest

from toolwire import MissingApiKeyError, model
from toolwire.models import PROVIDERS

KEYED = sorted(
    (name, entry.key_env)
    for name, entry in PROVIDERS.items()
    if entry.key_required
    and entry.key_env
    and entry.factory.startswith("toolwire.models.providers:")
)
"""Providers whose model holds an `openai`/`anthropic` SDK client exposing `api_key`."""

OTHER_KEYED = [
    ("azure", "AZURE_OPENAI_API_KEY"),
    ("gemini", "GEMINI_API_KEY"),
    ("google", "GEMINI_API_KEY"),
    ("mistral", "MISTRAL_API_KEY"),
    ("openai-responses", "OPENAI_API_KEY"),
]


def test_every_provider_with_a_key_is_checked() -> None:
    # Keyless: local servers, the offline model, and Vertex (application default credentials).
    keyless = {"ollama", "openai-compatible", "test", "vertex"}
    checked = {name for name, _ in KEYED} | {name for name, _ in OTHER_KEYED}
    assert checked == set(PROVIDERS) - keyless


@pytest.mark.parametrize(("provider", "variable"), OTHER_KEYED)
def test_the_other_providers_name_their_key_variable_when_built(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "AZURE_OPENAI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    with pytest.raises(MissingApiKeyError, match=variable) as caught:
        model(f"{provider}:some-model")
    assert caught.value.env_var == variable
    monkeypatch.setenv(variable, "a-key")
    assert model(f"{provider}:some-model").model_name == "some-model"


@pytest.mark.parametrize(("provider", "variable"), KEYED)
def test_a_missing_key_names_its_variable_when_the_model_is_built(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for _, name in KEYED:
        monkeypatch.setenv(name, "some-other-providers-key")
    monkeypatch.delenv(variable)
    with pytest.raises(MissingApiKeyError, match=variable) as caught:
        model(f"{provider}:some-model")
    assert (caught.value.provider, caught.value.env_var) == (provider, variable)
    assert isinstance(caught.value, ValueError)  # what callers caught before
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("provider", "variable"), KEYED)
def test_a_key_from_the_environment_or_passed_in_is_used(
    provider: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, "from-the-environment")
    built = model(f"{provider}:some-model")
    assert built.client.api_key == "from-the-environment"
    monkeypatch.delenv(variable)
    passed = model(f"{provider}:some-model", api_key="passed-in")
    assert passed.client.api_key == "passed-in"


def test_an_empty_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    with pytest.raises(MissingApiKeyError, match="ANTHROPIC_API_KEY"):
        model("anthropic:claude-sonnet-4-5")


def test_building_a_priced_model_loads_the_price_tables_in_the_background() -> None:
    import subprocess
    import sys

    code = (
        "import sys, threading\n"
        "from toolwire import model, usage\n"
        "assert 'genai_prices' not in sys.modules\n"
        "model('openai:gpt-4.1-mini', api_key='k')\n"
        "loader = usage.preload_prices()\n"
        "print(loader.name, loader is not threading.current_thread())\n"
        "loader.join(60)\n"
        "print('genai_prices.data_snapshot' in sys.modules, usage.preload_prices() is loader)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["toolwire-price-tables True", "True True"]


@pytest.mark.anyio
async def test_load_prices_waits_off_the_loop_then_prices_are_known() -> None:
    from toolwire.models.base import Usage
    from toolwire.usage import estimate_cost, load_prices

    await load_prices()
    cost = estimate_cost([("openai", "gpt-4.1-mini", Usage(input_tokens=1000, output_tokens=100))])
    assert cost.total is not None and cost.total > 0
