from __future__ import annotations

import threading

import pytest

from toolwire import DuplicateToolError, ToolNameError, ToolRegistry, UnknownToolError, tool


def make(name: str):  # type: ignore[no-untyped-def]
    def f(x: int) -> int:
        """Double."""
        return 2 * x

    return tool(name=name)(f)


def test_add_get_list_all_remove() -> None:
    reg = ToolRegistry([make("b_tool"), make("a_tool")])
    assert reg.list() == ["a_tool", "b_tool"]
    assert [t.name for t in reg.all()] == ["a_tool", "b_tool"]
    assert [t.name for t in reg] == ["a_tool", "b_tool"]
    assert len(reg) == 2
    assert "a_tool" in reg and "zzz" not in reg
    assert reg.get("a_tool").name == "a_tool"
    removed = reg.remove("a_tool")
    assert removed.name == "a_tool" and reg.list() == ["b_tool"]


def test_plain_function_and_dict_are_tools() -> None:
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    reg = ToolRegistry()
    reg.add(add)
    reg.add(
        {
            "name": "lookup",
            "description": "Look up.",
            "parameters": {"type": "object", "properties": {}},
        }
    )
    assert reg.list() == ["add", "lookup"]
    assert reg.get("lookup").executable is False


def test_duplicate_name_raises() -> None:
    reg = ToolRegistry([make("same")])
    with pytest.raises(DuplicateToolError, match="'same'"):
        reg.add(make("same"))


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("has space", "' '"),
        ("dots.are.bad", "'.'"),
        ("x" * 65, "65 characters"),
        ("ünïcode", "'ï', 'ü'"),
        ("slash/name", "'/'"),
    ],
)
def test_names_providers_reject(name: str, reason: str) -> None:
    with pytest.raises(ToolNameError, match=reason):
        ToolRegistry().add(make(name))


def test_unknown_tool_lists_closest_names() -> None:
    reg = ToolRegistry([make("get_weather"), make("get_time"), make("send_email")])
    with pytest.raises(UnknownToolError) as info:
        reg.get("get_wether")
    assert info.value.suggestions[0] == "get_weather"
    assert "Did you mean" in str(info.value)
    with pytest.raises(UnknownToolError, match="Available"):
        reg.get("zzzzzzzzzzzz")
    with pytest.raises(UnknownToolError):
        reg.remove("nope")
    assert isinstance(info.value, LookupError)


def test_definitions_in_a_dialect() -> None:
    reg = ToolRegistry([make("b"), make("a")])
    defs = reg.definitions("openai")
    assert [d.name for d in defs] == ["a", "b"]
    assert all(d.strict and d.parameters["additionalProperties"] is False for d in defs)


def test_concurrent_adds_from_threads_keep_every_tool_once() -> None:
    reg = ToolRegistry()
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(start: int) -> None:
        barrier.wait(timeout=10)
        for i in range(start, start + 50):
            try:
                reg.add(make(f"t{i % 200}"))
            except DuplicateToolError as exc:
                errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k * 50,)) for k in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert len(reg) == 200
    assert len(errors) == 200  # 400 adds, 200 distinct names
