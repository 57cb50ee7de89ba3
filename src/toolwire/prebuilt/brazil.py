"""Brazil tools that need no key: CPF/CNPJ validation done locally, and BrasilAPI lookups.

The CNPJ check handles the alphanumeric format the Receita Federal introduces in 2026: twelve
characters from 0-9 and A-Z followed by two numeric check digits, each character weighing its
ASCII code minus 48 in the modulo-11 computation (so digits keep their old values).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import Field

from .._record import record
from ..errors import ToolError
from ..tools import FunctionTool, ToolAnnotations, tool
from ._egress import EgressPolicy
from ._http import (
    expect_dict,
    expect_list,
    join_url,
    loose_dict,
    loose_list,
    request_json,
    text_of,
    tool_policy,
)

__all__ = [
    "BRASILAPI_BASE_URL",
    "DocumentCheck",
    "br_bank_lookup",
    "br_cep_lookup",
    "br_cnpj_lookup",
    "br_ddd_lookup",
    "br_holidays",
    "br_interest_rates",
    "br_tools",
    "br_validate_cnpj",
    "br_validate_cpf",
    "brasilapi_tools",
    "brazil_tools",
    "check_cnpj",
    "check_cpf",
    "cnpj_check_digits",
    "cpf_check_digits",
]

BRASILAPI_BASE_URL = "https://brasilapi.com.br/api"
_SERVICE = "BrasilAPI"


# --- CPF and CNPJ, computed locally ----------------------------------------------------------


@record(frozen=True)
class DocumentCheck:
    """The outcome of a CPF or CNPJ check.

    Attributes:
        valid: Whether the number is well formed and its check digits match.
        normalized: The bare characters (digits, and letters for an alphanumeric CNPJ).
        formatted: The number with the usual mask, when it has the right length.
        reason: Why it is invalid; empty when valid.
        kind: "cpf", "cnpj" or "cnpj-alphanumeric".
    """

    valid: bool
    normalized: str
    formatted: str
    reason: str
    kind: str

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view."""
        out: dict[str, Any] = {
            "valid": self.valid,
            "kind": self.kind,
            "normalized": self.normalized,
        }
        if self.formatted:
            out["formatted"] = self.formatted
        if self.reason:
            out["reason"] = self.reason
        return out


_CPF_MASK = re.compile(r"[\s.\-/]")
_CNPJ_MASK = re.compile(r"[\s.\-/]")


def _mod11(values: list[int], weights: list[int]) -> int:
    remainder = sum(v * w for v, w in zip(values, weights, strict=True)) % 11
    return 0 if remainder < 2 else 11 - remainder


def cpf_check_digits(base: str) -> str:
    """The two check digits of a CPF's first nine digits."""
    if len(base) != 9 or not base.isascii() or not base.isdigit():
        raise ValueError("a CPF base is nine digits")
    values = [int(c) for c in base]
    first = _mod11(values, list(range(10, 1, -1)))
    second = _mod11([*values, first], list(range(11, 1, -1)))
    return f"{first}{second}"


def check_cpf(text: str) -> DocumentCheck:
    """Check a CPF, with or without its mask (`123.456.789-09` or `12345678909`)."""
    bare = _CPF_MASK.sub("", text.strip())
    formatted = f"{bare[:3]}.{bare[3:6]}.{bare[6:9]}-{bare[9:]}" if len(bare) == 11 else ""

    def invalid(reason: str) -> DocumentCheck:
        return DocumentCheck(False, bare, formatted, reason, "cpf")

    if not bare:
        return invalid("the CPF is empty")
    if not bare.isascii() or not bare.isdigit():
        return invalid("a CPF has only digits (and optionally the mask characters . and -)")
    if len(bare) != 11:
        return invalid(f"a CPF has 11 digits, this has {len(bare)}")
    if len(set(bare)) == 1:
        return invalid("a CPF cannot have all digits equal")
    if cpf_check_digits(bare[:9]) != bare[9:]:
        return invalid("the check digits do not match")
    return DocumentCheck(True, bare, formatted, "", "cpf")


_CNPJ_WEIGHTS_1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
_CNPJ_WEIGHTS_2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
_CNPJ_BASE = re.compile(r"^[0-9A-Z]{12}$")


def cnpj_check_digits(base: str) -> str:
    """The two check digits of a CNPJ's first twelve characters (digits or, since 2026, A-Z)."""
    base = base.upper()
    if not _CNPJ_BASE.fullmatch(base):
        raise ValueError("a CNPJ base is twelve characters from 0-9 and A-Z")
    values = [ord(c) - 48 for c in base]
    first = _mod11(values, _CNPJ_WEIGHTS_1)
    second = _mod11([*values, first], _CNPJ_WEIGHTS_2)
    return f"{first}{second}"


def check_cnpj(text: str) -> DocumentCheck:
    """Check a CNPJ, numeric or alphanumeric, with or without its mask (`12.ABC.345/01DE-35`)."""
    bare = _CNPJ_MASK.sub("", text.strip()).upper()
    alphanumeric = any(c.isalpha() for c in bare)
    kind = "cnpj-alphanumeric" if alphanumeric else "cnpj"
    formatted = (
        f"{bare[:2]}.{bare[2:5]}.{bare[5:8]}/{bare[8:12]}-{bare[12:]}" if len(bare) == 14 else ""
    )

    def invalid(reason: str) -> DocumentCheck:
        return DocumentCheck(False, bare, formatted, reason, kind)

    if not bare:
        return invalid("the CNPJ is empty")
    if not bare.isascii() or not bare.isalnum():
        return invalid("a CNPJ has only digits and letters A-Z (and optionally the mask . / -)")
    if len(bare) != 14:
        return invalid(f"a CNPJ has 14 characters, this has {len(bare)}")
    if not bare[12:].isdigit():
        return invalid("the last two characters of a CNPJ (the check digits) are always digits")
    if len(set(bare)) == 1:
        return invalid("a CNPJ cannot have all characters equal")
    if cnpj_check_digits(bare[:12]) != bare[12:]:
        return invalid("the check digits do not match")
    return DocumentCheck(True, bare, formatted, "", kind)


def _validate_cpf(cpf: str) -> dict[str, Any]:
    """Check whether a Brazilian CPF number is valid, offline (check digits and format).

    Returns whether it is valid, the formatted number and, when invalid, the reason. This does
    not say whether the CPF is registered to anyone.

    Args:
        cpf: The CPF, with or without the mask, e.g. "123.456.789-09" or "12345678909".
    """
    return check_cpf(cpf).as_dict()


def _validate_cnpj(cnpj: str) -> dict[str, Any]:
    """Check whether a Brazilian CNPJ is valid, offline, including the 2026 alphanumeric format.

    Returns whether it is valid, its kind (numeric or alphanumeric), the formatted number and,
    when invalid, the reason. To see the company behind a CNPJ, use br_cnpj_lookup.

    Args:
        cnpj: The CNPJ, with or without the mask, e.g. "11.222.333/0001-81" or "12ABC34501DE35".
    """
    return check_cnpj(cnpj).as_dict()


br_validate_cpf: FunctionTool = tool(
    _validate_cpf,
    name="br_validate_cpf",
    annotations=ToolAnnotations(
        title="Validate a CPF",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)
"""Validate a CPF locally."""

br_validate_cnpj: FunctionTool = tool(
    _validate_cnpj,
    name="br_validate_cnpj",
    annotations=ToolAnnotations(
        title="Validate a CNPJ",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)
"""Validate a CNPJ (numeric or alphanumeric) locally."""


# --- BrasilAPI lookups -----------------------------------------------------------------------


def _annotations(title: str) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=True,
    )


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


_CNPJ_FIELDS = (
    "cnpj", "razao_social", "nome_fantasia", "descricao_situacao_cadastral",
    "data_situacao_cadastral", "descricao_identificador_matriz_filial", "descricao_matriz_filial",
    "data_inicio_atividade", "cnae_fiscal",
    "cnae_fiscal_descricao", "natureza_juridica", "porte", "capital_social", "opcao_pelo_simples",
    "opcao_pelo_mei", "descricao_tipo_de_logradouro", "logradouro", "numero", "complemento",
    "bairro", "municipio", "uf", "cep", "ddd_telefone_1", "email",
)  # fmt: skip


def brasilapi_tools(
    *,
    base_url: str = BRASILAPI_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
) -> list[FunctionTool]:
    """Build the BrasilAPI lookup tools: CEP, CNPJ, banks, holidays, DDD and interest rates.

    Args:
        base_url: The API root, up to `/api` (for tests and mirrors).
        timeout: Seconds for each request.
        egress: The egress policy (public addresses only when `None`).
    """
    policy = tool_policy(egress, timeout)

    async def get(path: str, not_found: str | None = None) -> Any:
        return await request_json(
            _SERVICE, "GET", join_url(base_url, path), policy=policy, not_found=not_found
        )

    async def br_cep_lookup(cep: str) -> dict[str, Any]:
        """Look up a Brazilian postal code (CEP): street, neighbourhood, city and state.

        Also gives coordinates when BrasilAPI knows them.

        Args:
            cep: The CEP, 8 digits, with or without the dash, e.g. "01001-000".
        """
        digits = re.sub(r"[\s.\-]", "", cep)
        if not (len(digits) == 8 and digits.isascii() and digits.isdigit()):
            raise ToolError(f"{cep!r} is not a CEP: a CEP has 8 digits, e.g. 01001-000.")
        data = expect_dict(
            await get(f"cep/v2/{digits}", f"CEP {digits} was not found"), _SERVICE, "the response"
        )
        out = {
            key: text_of(data.get(key))
            for key in ("cep", "street", "neighborhood", "city", "state")
        }
        coordinates = loose_dict(loose_dict(data.get("location")).get("coordinates"))
        if text_of(coordinates.get("latitude")):
            out_coords = {
                "latitude": text_of(coordinates.get("latitude")),
                "longitude": text_of(coordinates.get("longitude")),
            }
            return {**out, "coordinates": out_coords}
        return out

    async def br_cnpj_lookup(cnpj: str) -> dict[str, Any]:
        """Look up a Brazilian company by CNPJ in the Receita Federal registry (via BrasilAPI).

        Returns the legal and trade names, registration status, main activity (CNAE), address,
        size, share capital and partners. The CNPJ is checked locally first.

        Args:
            cnpj: The CNPJ, with or without the mask, e.g. "19.131.243/0001-97".
        """
        check = check_cnpj(cnpj)
        if not check.valid:
            raise ToolError(f"{cnpj!r} is not a valid CNPJ: {check.reason}.")
        data = expect_dict(
            await get(f"cnpj/v1/{check.normalized}", f"CNPJ {check.formatted} was not found"),
            _SERVICE,
            "the response",
        )
        out: dict[str, Any] = {k: data[k] for k in _CNPJ_FIELDS if data.get(k) not in (None, "")}
        partners = [loose_dict(p) for p in loose_list(data.get("qsa"))[:25]]
        if partners:
            out["partners"] = [
                {"name": text_of(p.get("nome_socio")), "role": text_of(p.get("qualificacao_socio"))}
                for p in partners
            ]
        return out

    async def br_bank_lookup(
        code: Annotated[int, Field(ge=1, le=999)] | None = None, name: str | None = None
    ) -> dict[str, Any]:
        """Find Brazilian banks by their 3-digit COMPE code or by part of their name.

        Returns each bank's code, short and full names and ISPB.

        Args:
            code: The bank code, e.g. 1 (Banco do Brasil), 237, 341.
            name: Part of the bank's name, e.g. "caixa"; accents and case are ignored.
        """
        if code is not None:
            bank = expect_dict(
                await get(f"banks/v1/{code}", f"No bank has code {code:03d}"),
                _SERVICE,
                "the response",
            )
            return {"banks": [_bank(bank)]}
        if not name or not name.strip():
            raise ToolError("Give a bank code or part of a bank name.")
        wanted = _fold(name.strip())
        banks = expect_list(await get("banks/v1"), _SERVICE, "the bank list")
        found: list[dict[str, Any]] = []
        for raw in banks:
            bank = _bank(raw)
            if wanted in _fold(f"{bank['name']} {bank['full_name']}"):
                found.append(bank)
        return {"banks": found[:20], "total_matches": len(found)}

    async def br_holidays(year: Annotated[int, Field(ge=1900, le=2199)]) -> dict[str, Any]:
        """List Brazil's national holidays of a year, with dates and names (in Portuguese).

        Args:
            year: The year, e.g. 2026.
        """
        items = expect_list(await get(f"feriados/v1/{year}"), _SERVICE, "the holiday list")
        holidays: list[dict[str, str]] = []
        for raw in items:
            entry = expect_dict(raw, _SERVICE, "a holiday")
            holidays.append({key: text_of(entry.get(key)) for key in ("date", "name", "type")})
        return {"year": year, "holidays": holidays}

    async def br_ddd_lookup(ddd: Annotated[int, Field(ge=11, le=99)]) -> dict[str, Any]:
        """Find the state and cities served by a Brazilian telephone area code (DDD).

        Args:
            ddd: The two-digit area code, e.g. 11 (São Paulo) or 21 (Rio de Janeiro).
        """
        data = expect_dict(
            await get(f"ddd/v1/{ddd}", f"DDD {ddd} is not in use"), _SERVICE, "the response"
        )
        cities = expect_list(data.get("cities", []), _SERVICE, "cities")
        names = sorted(text_of(c) for c in cities if text_of(c))
        return {"ddd": ddd, "state": text_of(data.get("state")), "cities": names}

    async def br_interest_rates(
        name: Literal["Selic", "CDI", "IPCA"] | None = None,
    ) -> dict[str, Any]:
        """Get Brazil's current reference rates: Selic, CDI and IPCA (annual, in percent).

        Args:
            name: One rate only; all three when omitted.
        """
        path = f"taxas/v1/{name}" if name else "taxas/v1"
        data = await get(path, f"The rate {name} is not available" if name else None)
        items: list[Any] = (
            [data] if isinstance(data, dict) else expect_list(data, _SERVICE, "the rate list")
        )
        rates: dict[str, Any] = {}
        for item in items:
            entry = expect_dict(item, _SERVICE, "a rate")
            label = text_of(entry.get("nome"))
            value = entry.get("valor")
            if label and isinstance(value, int | float) and not isinstance(value, bool):
                rates[label] = value
        if not rates:
            raise ToolError("BrasilAPI returned no rates.")
        return {"rates_percent_per_year": rates}

    lookups = [
        (br_cep_lookup, "Look up a CEP"),
        (br_cnpj_lookup, "Look up a company by CNPJ"),
        (br_bank_lookup, "Find a Brazilian bank"),
        (br_holidays, "Brazilian national holidays"),
        (br_ddd_lookup, "Look up a DDD area code"),
        (br_interest_rates, "Brazilian interest rates"),
    ]
    return [tool(fn, annotations=_annotations(title)) for fn, title in lookups]


def _bank(data: Any) -> dict[str, Any]:
    bank = expect_dict(data, _SERVICE, "a bank")
    code = bank.get("code")
    return {
        "code": f"{code:03d}" if isinstance(code, int) and not isinstance(code, bool) else None,
        "name": text_of(bank.get("name")),
        "full_name": text_of(bank.get("fullName")),
        "ispb": text_of(bank.get("ispb")),
    }


(
    br_cep_lookup,
    br_cnpj_lookup,
    br_bank_lookup,
    br_holidays,
    br_ddd_lookup,
    br_interest_rates,
) = brasilapi_tools()


def brazil_tools(
    *,
    base_url: str = BRASILAPI_BASE_URL,
    timeout: float = 10.0,
    egress: EgressPolicy | None = None,
) -> list[FunctionTool]:
    """Every Brazil tool: the two local validators plus `brasilapi_tools(...)` with these settings."""
    lookups = brasilapi_tools(base_url=base_url, timeout=timeout, egress=egress)
    return [br_validate_cpf, br_validate_cnpj, *lookups]


br_tools: list[FunctionTool] = [
    br_validate_cpf,
    br_validate_cnpj,
    br_cep_lookup,
    br_cnpj_lookup,
    br_bank_lookup,
    br_holidays,
    br_ddd_lookup,
    br_interest_rates,
]
"""Every Brazil tool: CPF/CNPJ validation (local) and the BrasilAPI lookups (no key needed)."""
