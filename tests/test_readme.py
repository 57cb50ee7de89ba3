"""The README's promises, kept true: its ten-line agent runs against a provider's real API shape."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_block(after: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index(after) :]
    found = re.search(r"^```py\n(.*?)^```", section, re.M | re.S)
    assert found is not None
    return found.group(1)


def test_the_ten_line_agent_runs_against_openais_api() -> None:
    from recordings.replay import ReplayServer, Reply

    code = readme_block("## An agent in ten lines")
    assert len(code.strip().splitlines()) <= 10

    def completion(message: dict[str, object], finish: str) -> Reply:
        return Reply.of_json(
            200,
            {
                "id": "chatcmpl-readme",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-4.1-mini-2025-04-14",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 80, "completion_tokens": 12, "total_tokens": 92},
            },
        )

    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "forecast", "arguments": '{"city": "Recife", "days": 1}'},
    }
    replies = [
        completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"),
        completion({"role": "assistant", "content": "Yes: clear skies."}, "stop"),
    ]
    with ReplayServer(replies) as server:
        env = {
            **os.environ,
            "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": server.base_url + "/v1",
        }
        env.pop("TOOLWIRE_ALLOW_MODEL_REQUESTS", None)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"Yes: clear skies\. \(cost: \$0\.\d+\)\n", done.stdout), done.stdout
    sent = [r.json for r in server.received]
    assert sent[0]["tools"][0]["function"]["name"] == "forecast"
    assert sent[1]["messages"][-1]["content"] == '{"city":"Recife","days":1,"sky":"clear"}'


def test_the_install_line_works_from_a_clone_and_examples_are_pointed_to() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    install = text[text.index("## Install") : text.index("## An agent in ten lines")]
    # The package is on no index: the README says how to install from the clone.
    assert "pip install -e '.[openai,mcp,cli]'" in install
    assert "pip install 'toolwire[" not in install
    # Every extra the line lists exists, and so does every example it names.
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    listed = re.search(r"# extras: (.*) \(or all\)", install)
    assert listed is not None
    assert {e.strip() for e in listed.group(1).split(",")} <= set(extras)
    named = set(re.findall(r"`(\w+\.py)`", install))
    assert named == {p.name for p in (ROOT / "examples").glob("*.py")}
    # The two commands of a fresh clone stay as they are.
    assert "make demo   #" in text and "make test   #" in text


def test_the_package_metadata_claims_what_is_true() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    # Python versions claimed: only the one the suite runs on (requires-python stays >=3.11).
    claimed = {
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if c.startswith("Programming Language :: Python :: 3.")
    }
    assert claimed == {f"{sys.version_info.major}.{sys.version_info.minor}"} == {"3.11"}
    # The licence it names is there, in full.
    assert project["license"] == "MIT"
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 The toolwire developers\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in licence
