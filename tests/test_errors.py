"""The error tree: one module holds every public exception, and its docstring draws them all."""

from __future__ import annotations

import inspect

import pytest

from toolwire import errors, prebuilt
from toolwire.prebuilt import _egress, _http, arithmetic

EXCEPTIONS = [
    name
    for name in errors.__all__
    if inspect.isclass(value := getattr(errors, name)) and issubclass(value, BaseException)
]


def test_all_is_sorted_and_complete() -> None:
    assert errors.__all__ == sorted(errors.__all__)
    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and value.__module__ == "toolwire.errors"
    }
    assert defined <= set(errors.__all__)


@pytest.mark.parametrize("name", EXCEPTIONS)
def test_every_exception_is_drawn_in_the_tree(name: str) -> None:
    doc = errors.__doc__ or ""
    assert any(line.lstrip("│ ├└─").startswith(f"{name} ") for line in doc.splitlines()), name


@pytest.mark.parametrize(
    ("module", "name"),
    [
        (arithmetic, "CalculatorError"),
        (_egress, "EgressBlocked"),
        (_egress, "EgressTimeout"),
        (_http, "UpstreamError"),
        (_http, "UpstreamUnavailable"),
        (prebuilt, "CalculatorError"),
        (prebuilt, "EgressBlocked"),
        (prebuilt, "UpstreamUnavailable"),
    ],
)
def test_prebuilt_errors_live_in_the_tree_and_keep_their_old_imports(
    module: object, name: str
) -> None:
    value = getattr(module, name)
    assert value is getattr(errors, name)
    assert value.__module__ == "toolwire.errors"
    assert issubclass(value, errors.ToolError)


def test_retryable_prebuilt_errors_are_retryable() -> None:
    assert issubclass(errors.EgressTimeout, errors.RetryableError)
    assert issubclass(errors.UpstreamUnavailable, errors.RetryableError)
    assert issubclass(errors.UpstreamUnavailable, errors.UpstreamError)
    unavailable = errors.UpstreamUnavailable("svc", "busy", status=503, retry_after=2.0)
    assert (unavailable.service, unavailable.status, unavailable.retry_after) == ("svc", 503, 2.0)
    blocked = errors.EgressBlocked("http://10.0.0.1/", "a private address")
    assert str(blocked) == "Blocked request to http://10.0.0.1/: a private address."
