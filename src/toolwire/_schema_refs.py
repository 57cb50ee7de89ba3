"""Where a schema lives: base URIs, `$id`, anchors, dialects and THE `$ref` resolver.

`SchemaIndex` walks a schema document once, following only keywords that hold subschemas (so an
`$id` inside an `enum` or a `const` is data, not an identifier), and records for every subschema its
base URI, its dialect (from the nearest `$schema`) and its JSON Pointer for messages. References are
resolved against that record: JSON Pointers, `$anchor`, `$dynamicAnchor`, draft-07's `#name` ids,
embedded resources and documents the caller supplies. Nothing is fetched over the network: a URI
nobody supplied is a `SchemaError` when the validator is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, cast
from urllib.parse import unquote, urljoin

from ._record import record
from .errors import SchemaError

__all__ = [
    "DRAFT4",
    "DRAFT6",
    "DRAFT7",
    "DRAFT2019",
    "DRAFT2020",
    "Dialect",
    "Located",
    "SchemaIndex",
    "Where",
    "join_uri",
    "schema_error",
]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


@record(frozen=True)
class Dialect:
    """The rules a schema follows: its draft and, for 2020-12, the vocabularies in force."""

    name: str
    validation: bool = True  # the validation vocabulary (type, enum, bounds, required...)

    @property
    def modern(self) -> bool:
        """2019-09 and later: `$ref` sits beside other keywords; `$anchor`, `unevaluated*`."""
        return self.name in ("2019-09", "2020-12")


DRAFT2020 = Dialect("2020-12")
DRAFT2019 = Dialect("2019-09")
DRAFT7 = Dialect("draft-07")
DRAFT6 = Dialect("draft-06")
DRAFT4 = Dialect("draft-04")
_KNOWN = {
    "json-schema.org/draft/2020-12/schema": DRAFT2020,
    "json-schema.org/draft/2019-09/schema": DRAFT2019,
    "json-schema.org/draft-07/schema": DRAFT7,
    "json-schema.org/draft-06/schema": DRAFT6,
    "json-schema.org/draft-04/schema": DRAFT4,
}
_VOCAB_PREFIX = "https://json-schema.org/draft/2020-12/vocab/"
_VOCAB_2019_PREFIX = "https://json-schema.org/draft/2019-09/vocab/"
_UNDERSTOOD_VOCABS = {"core", "applicator", "unevaluated", "validation", "meta-data", "content"}
_FORMAT_VOCABS = {"format-annotation", "format"}

# Keywords whose values are subschemas: one schema, a list of them, or a map of them.
SINGLE = (
    "additionalProperties", "propertyNames", "additionalItems", "contains", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema", "items",
)  # fmt: skip
LISTS = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
        "dependencies")  # fmt: skip


def schema_error(keyword: str, pointer: str, reason: str) -> SchemaError:
    """The one shape of a refused schema: the keyword, where it is, and why."""
    return SchemaError(f"{keyword} at #{pointer}: {reason}")


def _has_scheme(uri: str) -> bool:
    return _SCHEME.match(uri) is not None


def join_uri(base: str, ref: str) -> str:
    """`ref` resolved against `base` (RFC 3986), without an empty trailing fragment."""
    if not ref:
        out = base
    elif ref.startswith("#"):
        out = base.split("#", 1)[0] + ref
    elif _has_scheme(ref) or not base:
        out = ref
    else:
        out = urljoin(base, ref)
    return out[:-1] if out.endswith("#") else out


def _split(uri: str) -> tuple[str, str]:
    head, _, fragment = uri.partition("#")
    return head, unquote(fragment)


def dialect_for(uri: str) -> Dialect | None:
    """The dialect a well-known `$schema` URI names, or None."""
    head = uri.split("#", 1)[0].removeprefix("https://").removeprefix("http://")
    return _KNOWN.get(head)


@record(frozen=True)
class Where:
    """Where a subschema sits: its base URI, its dialect and its JSON Pointer (for messages)."""

    base: str
    dialect: Dialect
    pointer: str
    resource: str  # the URI of the schema resource holding it (its dynamic scope entry)


@record(frozen=True)
class Located:
    """A resolved reference: the target schema, where it sits, and the anchor it was found by."""

    schema: Any
    where: Where
    dynamic_anchor: str | None = None


def _children(s: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    for key in SINGLE:
        sub = s.get(key)
        if isinstance(sub, (Mapping, bool)):
            yield f"/{key}", sub
    for key in LISTS:
        subs = s.get(key)
        if isinstance(subs, list):
            for i, sub in enumerate(cast(list[Any], subs)):
                yield f"/{key}/{i}", sub
    for key in MAPS:
        subs = s.get(key)
        if isinstance(subs, Mapping):
            for name, sub in cast(Mapping[str, Any], subs).items():
                if isinstance(sub, (Mapping, bool)):
                    escaped = str(name).replace("~", "~0").replace("/", "~1")
                    yield f"/{key}/{escaped}", sub


class SchemaIndex:
    """Every identifier in a schema and the documents it refers to, resolved on demand.

    Args:
        root: The schema.
        documents: Other schema documents by URI, or a function from a URI to the document
            (returning None when it has none). Never fetched from the network.
    """

    def __init__(
        self,
        root: Any,
        documents: Mapping[str, Any] | Callable[[str], Any] | None = None,
    ) -> None:
        self._documents = documents
        self.resources: dict[str, tuple[Any, Where]] = {}
        self.anchors: dict[tuple[str, str], Any] = {}
        self.dynamic_anchors: dict[tuple[str, str], Any] = {}
        self.where: dict[int, Where] = {}
        self._keep: list[Any] = []  # holds indexed schemas so their ids stay unique
        self.root_where = self.add_document(root, Where("", DRAFT2020, "", ""))

    def where_of(self, schema: Any, fallback: Where) -> Where:
        return self.where.get(id(schema), fallback)

    def _dialect(self, uri: Any, pointer: str, fallback: Dialect) -> Dialect:
        if not isinstance(uri, str):
            return fallback
        known = dialect_for(uri)
        if known is not None:
            return known
        meta = self._load(uri.split("#", 1)[0])
        if not isinstance(meta, Mapping):
            raise schema_error(
                "$schema", pointer, f"unknown dialect {uri!r} (no metaschema was supplied for it)"
            )
        meta = cast(Mapping[str, Any], meta)
        parent = meta.get("$schema")
        base = dialect_for(parent) if isinstance(parent, str) else None
        if base is None:
            raise schema_error(
                "$schema", pointer, f"the metaschema {uri!r} does not declare a known dialect"
            )
        vocabularies = meta.get("$vocabulary")
        if not isinstance(vocabularies, Mapping) or not base.modern:
            return base
        names: set[str] = set()
        for vocab, required in cast(Mapping[str, Any], vocabularies).items():
            name = str(vocab).removeprefix(_VOCAB_PREFIX).removeprefix(_VOCAB_2019_PREFIX)
            if name in _UNDERSTOOD_VOCABS or name in _FORMAT_VOCABS:
                names.add(name)
            elif required is True:
                raise schema_error(
                    "$schema", pointer, f"the metaschema requires the unknown vocabulary {vocab!r}"
                )
        return Dialect(base.name, validation="validation" in names)

    def _load(self, uri: str) -> Any:
        docs = self._documents
        if docs is None:
            return None
        if callable(docs):
            return docs(uri)
        return docs.get(uri, docs.get(uri + "#"))

    def add_document(self, doc: Any, at: Where) -> Where:
        """Index a document (or a subschema first met through a pointer) sitting at `at`."""
        self._keep.append(doc)
        top = at
        if isinstance(doc, Mapping):
            top = self._enter(cast(Mapping[str, Any], doc), at, True)
        self.resources.setdefault(at.base, (cast(object, doc), top))
        stack: list[tuple[Any, Where]] = [(doc, top)]
        seen: set[int] = set()
        while stack:
            item, here = stack.pop()
            if not isinstance(item, Mapping) or id(cast(object, item)) in seen:
                continue
            s = cast(Mapping[str, Any], item)
            seen.add(id(s))
            if s is not doc:
                here = self._enter(s, here, False)
            self.where.setdefault(id(s), here)
            for suffix, sub in _children(s):
                child = Where(here.base, here.dialect, here.pointer + suffix, here.resource)
                stack.append((sub, child))
        return top

    def _enter(self, s: Mapping[str, Any], parent: Where, is_root: bool) -> Where:
        """Where `s` sits, registering the identifiers it declares."""
        base, dialect, resource = parent.base, parent.dialect, parent.resource
        ident = s.get("$id")
        if not isinstance(ident, str) or (not dialect.modern and "$ref" in s):
            ident = None  # before 2019-09, `$ref` makes every sibling keyword inert
        if ident is not None or is_root:
            dialect = self._dialect(s.get("$schema"), parent.pointer, dialect)
            if ident is not None and not dialect.modern and "$ref" in s:
                ident = None
        anchors: list[str] = []
        if ident is not None:
            head, fragment = _split(ident)
            if head:
                base = resource = join_uri(base, head)
            if fragment and not dialect.modern:
                anchors.append(fragment)  # draft-07 spells an anchor as `"$id": "#name"`
        here = Where(base, dialect, parent.pointer, resource)
        if ident is not None and _split(ident)[0]:
            self.resources.setdefault(base, (s, here))
        if dialect.modern:
            for key in ("$anchor", "$dynamicAnchor") if dialect.name == "2020-12" else ("$anchor",):
                name = s.get(key)
                if isinstance(name, str):
                    anchors.append(name)
                    if key == "$dynamicAnchor":
                        self.dynamic_anchors.setdefault((base, name), s)
        for name in anchors:
            self.anchors.setdefault((base, name), s)
        return here

    def resolve(self, ref: str, at: Where, keyword: str = "$ref") -> Located:
        """The schema `ref` (from a schema at `at`) points to.

        Raises:
            SchemaError: nothing known answers to the reference.
        """
        target_uri = join_uri(at.base, ref)
        head, fragment = _split(target_uri)
        found = self.resources.get(head)
        if found is None:
            doc = self._load(head)
            if doc is None:
                why = (
                    f"cannot resolve {ref!r}: no schema is known at {head!r} "
                    "(schemas are never fetched; metaschemas are not bundled)"
                )
                raise schema_error(keyword, at.pointer, why)
            self.add_document(doc, Where(head, at.dialect, "", head))
            found = self.resources[head]
        doc, doc_where = found
        if not fragment:
            return Located(doc, self.where_of(doc, doc_where))
        if not fragment.startswith("/"):
            target = self.anchors.get((head, fragment))
            if target is None:
                raise schema_error(keyword, at.pointer, f"cannot resolve {ref!r}: no such anchor")
            dynamic = fragment if (head, fragment) in self.dynamic_anchors else None
            return Located(target, self.where_of(target, doc_where), dynamic)
        target: Any = doc
        where = self.where_of(doc, doc_where)
        for token in fragment.split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, Mapping) and token in target:
                target = cast(Mapping[str, Any], target)[token]
            elif (
                isinstance(target, list)
                and token.isdigit()
                and int(token) < len(as_list := cast(list[Any], target))
            ):
                target = as_list[int(token)]
            else:
                raise schema_error(
                    keyword, at.pointer, f"cannot resolve {ref!r}: there is no {token!r}"
                )
            inner = self.where.get(id(target))
            pointer = f"{where.pointer}/{token.replace('~', '~0').replace('/', '~1')}"
            where = inner or Where(where.base, where.dialect, pointer, where.resource)
        if not isinstance(target, (Mapping, bool)):
            raise schema_error(keyword, at.pointer, f"cannot resolve {ref!r}: not a schema")
        if isinstance(target, Mapping) and id(cast(object, target)) not in self.where:
            where = self.add_document(target, where)
        return Located(target, where)
