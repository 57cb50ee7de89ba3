from __future__ import annotations

import httpx
import pytest

from recordings.replay import RECORDINGS, ReplayServer, Reply, iter_recordings, load_cassette


@pytest.mark.parametrize(
    "provider",
    [
        "anthropic",
        "openai_chat",
        "groq",
        "deepseek",
        "openrouter",
        "ollama",
        "openai_responses",
        "google",
        "mistral",
    ],
)
def test_every_cassette_loads(provider: str) -> None:
    assert RECORDINGS.is_dir(), f"the vendored recordings are missing: {RECORDINGS}"
    paths = list(iter_recordings(provider))
    assert paths
    for path in paths:
        interactions = load_cassette(path)
        assert interactions
        assert all(i.method == "POST" for i in interactions)
        assert all(isinstance(i.request_body, dict) for i in interactions)


def test_server_replays_in_order_and_records_requests() -> None:
    replies = [Reply.of_json(200, {"n": 1}, {"x-test": "a"}), Reply.of_sse("data: {}\n\n")]
    with ReplayServer(replies) as server, httpx.Client(base_url=server.base_url) as client:
        first = client.post("/v1/chat", json={"q": 1})
        second = client.post("/v1/chat", json={"q": 2})
        third = client.post("/v1/chat", json={"q": 3})
    assert first.json() == {"n": 1} and first.headers["x-test"] == "a"
    assert second.text == "data: {}\n\n"
    assert third.status_code == 599
    assert [r.json for r in server.received] == [{"q": 1}, {"q": 2}, {"q": 3}]
    assert server.mismatches == ["request 3 to /v1/chat: no reply left"]


def test_server_flags_unexpected_paths() -> None:
    with ReplayServer([Reply(200, b"{}", expect_path="/v1/messages")]) as server:
        response = httpx.post(server.base_url + "/v1/other", json={})
    assert response.status_code == 599
    assert server.mismatches == ["request 1: path /v1/other != recorded /v1/messages"]


def test_vendored_recordings_keep_their_licences_and_sources() -> None:
    readme = (RECORDINGS / "README.md").read_text()
    assert "| file | repo | path | commit | license |" in readme
    assert (RECORDINGS / "LICENSE-pydantic-ai-MIT.txt").read_text().startswith("The MIT License")
    assert "Apache License" in (RECORDINGS / "LICENSE-llm-anthropic-Apache-2.0.txt").read_text()
    listed = {line.split("`")[1] for line in readme.splitlines() if line.startswith("| `")}
    on_disk = {p.relative_to(RECORDINGS).as_posix() for p in RECORDINGS.rglob("*.yaml")}
    assert listed == on_disk
