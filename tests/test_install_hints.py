"""Every "pip install X" that toolwire prints names something that fixes it.

Each message in src/ is collected from the code itself (the `require_extra` calls, the provider
table they read, and the `except ImportError` blocks that print a `pip install`), then resolved
against pyproject.toml: the extra's requirements, followed through their own dependencies as
installed here, must hold the module whose absence the message reports. One real fresh-venv install
(the `otel` extra, in tests/test_extras.py) checks the resolution against pip itself.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "toolwire"
EXTRAS: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
    "optional-dependencies"
]
_HINT = re.compile(r"pip install (?:'toolwire\[([\w,-]+)\]'|([A-Za-z0-9][\w.-]*))")


@dataclass(frozen=True)
class Hint:
    """One message: where it is, what it tells the user to install, and what was missing."""

    where: str
    extras: tuple[str, ...]  # toolwire extras named
    packages: tuple[str, ...]  # distributions named directly
    modules: tuple[str, ...]  # the imports the message is about


def _strings(node: ast.AST) -> list[str]:
    found: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            found.append(child.value)
        elif isinstance(child, ast.JoinedStr):
            found.append("".join(v.value for v in child.values if isinstance(v, ast.Constant)))
    return found


def _imported(body: list[ast.stmt]) -> tuple[str, ...]:
    modules: list[str] = []
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import):
                modules.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.append(node.module)
    return tuple(modules)


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = (
        {n.id for n in ast.walk(handler.type) if isinstance(n, ast.Name)} if handler.type else set()
    )
    return bool(names & {"ImportError", "ModuleNotFoundError"})


def _tables(tree: ast.Module) -> list[tuple[str, str]]:
    """(extra, module) pairs of a module-level dict whose values are pairs of strings."""
    pairs: list[tuple[str, str]] = []
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if not isinstance(value, ast.Dict):
            continue
        for item in value.values:
            if isinstance(item, ast.Tuple) and len(item.elts) == 2:
                extra, module = (
                    e.value if isinstance(e, ast.Constant) else None for e in item.elts
                )
                if isinstance(extra, str) and isinstance(module, str):
                    pairs.append((extra, module))
    return pairs


def _provider_extras() -> list[tuple[str, str]]:
    """(extra, module) of every provider entry: `model()` reads its hint from `PROVIDERS`."""
    from toolwire.models import PROVIDERS

    return [entry.extra for entry in PROVIDERS.values() if entry.extra is not None]


def collect_hints() -> list[Hint]:
    """Every install hint in src/toolwire."""
    hints: list[Hint] = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require_extra":
                args = [a.value if isinstance(a, ast.Constant) else None for a in node.args]
                if all(isinstance(a, str) for a in args):
                    extra, *modules = args
                    hints.append(Hint(where, (extra,), (), tuple(modules or [extra])))
                else:  # arguments read from a table: every row of it is a message
                    table = _tables(tree) or _provider_extras()
                    assert table, f"{where}:{node.lineno}: require_extra with unknown arguments"
                    hints += [Hint(where, (e,), (), (m,)) for e, m in table]
            elif isinstance(node, ast.Try):
                for handler in node.handlers:
                    if not _catches_import_error(handler):
                        continue
                    for text in _strings(handler):
                        for extras, package in _HINT.findall(text):
                            hints.append(
                                Hint(
                                    f"{where}:{handler.lineno}",
                                    tuple(extras.split(",")) if extras else (),
                                    (package,) if package else (),
                                    _imported(node.body),
                                )
                            )
    return hints


def _closure(requirements: list[str], seen: set[str] | None = None) -> set[str]:
    """The distributions `requirements` install, with their own dependencies, by name."""
    seen = set() if seen is None else seen
    for text in requirements:
        requirement = Requirement(text)
        if requirement.name == "toolwire":
            for extra in requirement.extras:
                _closure(EXTRAS[extra], seen)
            continue
        name = requirement.name.lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            needs = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: the resolution below says so
        for need in needs:
            dependency = Requirement(need)
            if dependency.marker is None or any(
                dependency.marker.evaluate({"extra": e}) for e in ("", *requirement.extras)
            ):
                _closure([f"{dependency.name}{_extras_of(dependency)}"], seen)
    return seen


def _extras_of(requirement: Requirement) -> str:
    return f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""


def _provides(distribution: str, module: str) -> bool:
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return False
    path = module.replace(".", "/")
    return any(str(f) == f"{path}.py" or str(f).startswith(f"{path}/") for f in files)


def _fixes(hint: Hint, module: str) -> bool:
    requirements = [r for e in hint.extras for r in EXTRAS[e]] + list(hint.packages)
    return any(_provides(d, module) for d in _closure(requirements))


def test_the_hints_are_found() -> None:
    hints = collect_hints()
    # A sample of what must be among them, so that a change in how they are written is noticed.
    assert Hint("src/toolwire/_cli_trace.py", ("otel",), (), ("opentelemetry.sdk",)) in hints
    assert any(h.extras == ("google",) and "google.genai" in h.modules for h in hints)
    assert any(h.packages == ("genai-prices",) for h in hints)
    assert any(h.where.startswith("src/toolwire/models/_mistral_wire.py") for h in hints)
    # Every "pip install" said in src is one of them.
    said = {
        str(p.relative_to(ROOT))
        for p in SRC.rglob("*.py")
        for text in _strings(ast.parse(p.read_text(encoding="utf-8")))
        if "pip install" in text and "\n" not in text  # docstrings span lines
    }
    said -= {"src/toolwire/errors.py"}  # the template every require_extra fills
    assert said <= {h.where.split(":")[0] for h in hints}


def test_every_install_hint_names_what_provides_the_missing_module() -> None:
    wrong = [
        f"{h.where}: installing {h.extras or h.packages} does not provide {module!r}"
        for h in collect_hints()
        for module in h.modules
        if not _fixes(h, module)
    ]
    assert not wrong, "\n".join(wrong)


def test_every_named_extra_exists() -> None:
    for hint in collect_hints():
        assert set(hint.extras) <= set(EXTRAS), hint
