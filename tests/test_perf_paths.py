"""Behaviour kept while making hot paths cheaper (issue 28); the figures live in benchmarks/."""

from __future__ import annotations

import pytest

from toolwire import Agent, ScriptedModel

pytestmark = pytest.mark.anyio


async def test_a_results_repr_gives_the_historys_length_not_its_messages() -> None:
    # Python 3.11's asyncio.run formats the repr of the task holding the result as it ends.
    model = ScriptedModel(["the answer"])
    result = await Agent(model).run("a question nobody should see in the repr")
    text = repr(result)
    assert "messages=<2 messages>" in text and "trace=<0 calls>" in text
    assert "the answer" in text and "nobody should see" not in text
