"""Brazil tools: CPF/CNPJ validation, and the BrasilAPI lookups against a local fake BrasilAPI."""

from __future__ import annotations

from typing import Any

import pytest
from prebuilt_fakes import FakeServer, Reply

from toolwire.prebuilt import (
    EgressPolicy,
    br_tools,
    br_validate_cnpj,
    br_validate_cpf,
    brazil_tools,
    check_cnpj,
    check_cpf,
)
from toolwire.prebuilt.brazil import cnpj_check_digits, cpf_check_digits
from toolwire.results import ToolResult
from toolwire.tools import FunctionTool

pytestmark = pytest.mark.anyio

# --- CPF -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cpf", ["529.982.247-25", "52998224725", "111.444.777-35", " 111 444 777 35 ", "935.411.347-80"]
)
def test_valid_cpf(cpf: str) -> None:
    result = check_cpf(cpf)
    assert result.valid, result.reason
    assert result.formatted.count(".") == 2 and "-" in result.formatted


@pytest.mark.parametrize(
    ("cpf", "reason"),
    [
        ("529.982.247-24", "check digits"),
        ("52998224735", "check digits"),
        ("111.111.111-11", "all digits equal"),
        ("00000000000", "all digits equal"),
        ("99999999999", "all digits equal"),
        ("5299822472", "11 digits"),
        ("529982247250", "11 digits"),
        ("529.982.247-2A", "only digits"),
        ("５２９９８２２４７２５", "only digits"),  # full-width digits are not ASCII digits
        ("", "empty"),
    ],
)
def test_invalid_cpf(cpf: str, reason: str) -> None:
    result = check_cpf(cpf)
    assert not result.valid
    assert reason in result.reason


def test_cpf_check_digits() -> None:
    assert cpf_check_digits("529982247") == "25"
    with pytest.raises(ValueError, match="nine digits"):
        cpf_check_digits("12345")


# --- CNPJ ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cnpj", "kind"),
    [
        ("11.222.333/0001-81", "cnpj"),
        ("11222333000181", "cnpj"),
        ("19.131.243/0001-97", "cnpj"),
        ("00.000.000/0001-91", "cnpj"),
        ("12.ABC.345/01DE-35", "cnpj-alphanumeric"),  # the Receita Federal's published example
        ("12ABC34501DE35", "cnpj-alphanumeric"),
        ("12abc34501de35", "cnpj-alphanumeric"),
    ],
)
def test_valid_cnpj(cnpj: str, kind: str) -> None:
    result = check_cnpj(cnpj)
    assert result.valid, result.reason
    assert result.kind == kind
    assert result.formatted[2] == "." and result.formatted[-3] == "-"


@pytest.mark.parametrize(
    ("cnpj", "reason"),
    [
        ("11.222.333/0001-82", "check digits"),
        ("12.ABC.345/01DE-53", "check digits"),
        ("12.ABD.345/01DE-35", "check digits"),
        ("00.000.000/0000-00", "all characters equal"),
        ("11111111111111", "all characters equal"),
        ("12.ABC.345/01DE-3A", "always digits"),
        ("AAAAAAAAAAAAAA", "always digits"),
        ("1122233300018", "14 characters"),
        ("112223330001811", "14 characters"),
        ("11.222.333/0001-8!", "only digits and letters"),
        ("12.ÁBC.345/01DE-35", "only digits and letters"),
    ],
)
def test_invalid_cnpj(cnpj: str, reason: str) -> None:
    result = check_cnpj(cnpj)
    assert not result.valid
    assert reason in result.reason


def test_alphanumeric_check_digits_use_ascii_minus_48() -> None:
    assert cnpj_check_digits("12ABC34501DE") == "35"
    assert cnpj_check_digits("112223330001") == "81"
    # A letter weighs ord(c) - 48: "A" counts as 17, so it differs from any digit.
    assert cnpj_check_digits("A12223330001") != cnpj_check_digits("112223330001")


async def test_validation_tools() -> None:
    ok = await br_validate_cpf.invoke({"cpf": "529.982.247-25"})
    assert ok.structured == {
        "valid": True,
        "kind": "cpf",
        "normalized": "52998224725",
        "formatted": "529.982.247-25",
    }
    bad = await br_validate_cnpj.invoke({"cnpj": "12.ABC.345/01DE-36"})
    assert not bad.is_error  # an invalid number is an answer, not a failure
    assert bad.structured["valid"] is False
    assert bad.structured["kind"] == "cnpj-alphanumeric"
    assert br_validate_cpf.annotations.open_world_hint is False


# --- BrasilAPI lookups -----------------------------------------------------------------------

CEP = {
    "cep": "01001000",
    "state": "SP",
    "city": "São Paulo",
    "neighborhood": "Sé",
    "street": "Praça da Sé",
    "service": "open-cep",
    "location": {
        "type": "Point",
        "coordinates": {"longitude": "-46.6339", "latitude": "-23.5503"},
    },
}
CEP_NOT_FOUND = {
    "name": "CepPromiseError",
    "message": "Todos os serviços de CEP retornaram erro.",
    "type": "service_error",
    "errors": [{"name": "ServiceError", "message": "CEP NAO ENCONTRADO", "service": "correios"}],
}
CNPJ = {
    "uf": "SP",
    "cep": "01311902",
    "qsa": [
        {
            "pais": None,
            "nome_socio": "FULANA DE TAL",
            "codigo_pais": None,
            "faixa_etaria": "Entre 31 a 40 anos",
            "cnpj_cpf_do_socio": "***059967**",
            "qualificacao_socio": "Presidente",
            "codigo_faixa_etaria": 4,
            "data_entrada_sociedade": "2019-02-14",
            "identificador_de_socio": 2,
            "codigo_qualificacao_socio": 16,
        }
    ],
    "cnpj": "19131243000197",
    "email": None,
    "porte": "DEMAIS",
    "bairro": "BELA VISTA",
    "numero": "37",
    "municipio": "SAO PAULO",
    "logradouro": "PAULISTA 37",
    "cnae_fiscal": 9430800,
    "complemento": "ANDAR 4",
    "razao_social": "OPEN KNOWLEDGE BRASIL",
    "nome_fantasia": "REDE PELO CONHECIMENTO LIVRE",
    "capital_social": 0,
    "ddd_telefone_1": "1123851939",
    "natureza_juridica": "Associação Privada",
    "opcao_pelo_simples": None,
    "situacao_cadastral": 2,
    "cnae_fiscal_descricao": "Atividades de associações de defesa de direitos sociais",
    "data_inicio_atividade": "2013-10-03",
    "data_situacao_cadastral": "2013-10-03",
    "codigo_natureza_juridica": 3999,
    "identificador_matriz_filial": 1,
    "descricao_situacao_cadastral": "ATIVA",
    "descricao_tipo_de_logradouro": "AVENIDA",
    "descricao_identificador_matriz_filial": "MATRIZ",
}
BANKS = [
    {"ispb": "00000000", "name": "BCO DO BRASIL S.A.", "code": 1, "fullName": "Banco do Brasil S.A."},
    {"ispb": "00360305", "name": "CAIXA ECONOMICA FEDERAL", "code": 104, "fullName": "CAIXA ECONOMICA FEDERAL"},
    {"ispb": "60746948", "name": "BCO BRADESCO S.A.", "code": 237, "fullName": "Banco Bradesco S.A."},
    {"ispb": "60701190", "name": "ITAÚ UNIBANCO S.A.", "code": 341, "fullName": "ITAÚ UNIBANCO S.A."},
    {"ispb": "18236120", "name": "NU PAGAMENTOS - IP", "code": 260, "fullName": "NU PAGAMENTOS S.A. - INSTITUIÇÃO DE PAGAMENTO"},
    {"ispb": "08561701", "name": "PAGSEGURO INTERNET IP S.A.", "code": None, "fullName": "PAGSEGURO INTERNET INSTITUIÇÃO DE PAGAMENTO S.A."},
]  # fmt: skip
HOLIDAYS_2026 = [
    {"date": "2026-01-01", "name": "Confraternização mundial", "type": "national"},
    {"date": "2026-02-17", "name": "Carnaval", "type": "national"},
    {"date": "2026-04-03", "name": "Sexta-feira Santa", "type": "national"},
    {"date": "2026-04-05", "name": "Páscoa", "type": "national"},
    {"date": "2026-04-21", "name": "Tiradentes", "type": "national"},
    {"date": "2026-05-01", "name": "Dia do trabalho", "type": "national"},
    {"date": "2026-09-07", "name": "Independência do Brasil", "type": "national"},
    {"date": "2026-10-12", "name": "Nossa Senhora Aparecida", "type": "national"},
    {"date": "2026-11-02", "name": "Finados", "type": "national"},
    {"date": "2026-11-15", "name": "Proclamação da República", "type": "national"},
    {"date": "2026-11-20", "name": "Dia da consciência negra", "type": "national"},
    {"date": "2026-12-25", "name": "Natal", "type": "national"},
]
DDD_11 = {"state": "SP", "cities": ["SÃO PAULO", "GUARULHOS", "OSASCO", "BARUERI"]}
RATES = [
    {"nome": "Selic", "valor": 15},
    {"nome": "CDI", "valor": 14.9},
    {"nome": "IPCA", "valor": 4.68},
]


@pytest.fixture
def brasilapi(server: FakeServer, local_policy: EgressPolicy) -> dict[str, FunctionTool]:
    server.reply("/api/cep/v2/01001000", Reply(200, CEP))
    server.reply("/api/cep/v2/99999999", Reply(404, CEP_NOT_FOUND))
    server.reply("/api/cnpj/v1/19131243000197", Reply(200, CNPJ))
    server.reply(
        "/api/cnpj/v1/11222333000181",
        Reply(404, {"message": "CNPJ 11222333000181 não encontrado.", "type": "not_found"}),
    )
    server.reply("/api/banks/v1", Reply(200, BANKS))
    server.reply("/api/banks/v1/341", Reply(200, BANKS[3]))
    server.reply(
        "/api/banks/v1/999",
        Reply(404, {"message": "Código bancário não encontrado", "type": "BANK_CODE_NOT_FOUND"}),
    )
    server.reply("/api/feriados/v1/2026", Reply(200, HOLIDAYS_2026))
    server.reply("/api/ddd/v1/11", Reply(200, DDD_11))
    server.reply(
        "/api/ddd/v1/20",
        Reply(404, {"message": "DDD não encontrado", "type": "ddd_error", "name": "DDD_NOT_FOUND"}),
    )
    server.reply("/api/taxas/v1", Reply(200, RATES))
    server.reply("/api/taxas/v1/Selic", Reply(200, RATES[0]))
    tools = brazil_tools(base_url=f"{server.url}/api", egress=local_policy)
    return {t.name: t for t in tools}


async def call(tool: FunctionTool, **args: Any) -> ToolResult:
    return await tool.invoke(args)


async def test_cep(brasilapi: dict[str, FunctionTool], server: FakeServer) -> None:
    result = await call(brasilapi["br_cep_lookup"], cep="01001-000")
    assert not result.is_error, result.text
    assert result.structured == {
        "cep": "01001000",
        "street": "Praça da Sé",
        "neighborhood": "Sé",
        "city": "São Paulo",
        "state": "SP",
        "coordinates": {"latitude": "-23.5503", "longitude": "-46.6339"},
    }
    assert server.seen[-1].path == "/api/cep/v2/01001000"
    assert server.seen[-1].headers["user-agent"].startswith("toolwire/")


async def test_cep_not_found_and_malformed_input(
    brasilapi: dict[str, FunctionTool], server: FakeServer
) -> None:
    missing = await call(brasilapi["br_cep_lookup"], cep="99999-999")
    assert missing.is_error
    assert "CEP 99999999 was not found" in missing.text
    assert "Todos os serviços" in missing.text
    bad = await call(brasilapi["br_cep_lookup"], cep="123")
    assert bad.is_error
    assert "8 digits" in bad.text
    assert len(server.seen) == 1  # the malformed CEP never left the machine


async def test_cnpj(brasilapi: dict[str, FunctionTool]) -> None:
    result = await call(brasilapi["br_cnpj_lookup"], cnpj="19.131.243/0001-97")
    assert not result.is_error, result.text
    data = result.structured
    assert data["razao_social"] == "OPEN KNOWLEDGE BRASIL"
    assert data["descricao_situacao_cadastral"] == "ATIVA"
    assert data["partners"] == [{"name": "FULANA DE TAL", "role": "Presidente"}]
    assert "email" not in data  # nulls are left out
    assert data["capital_social"] == 0


async def test_cnpj_checked_locally_first(
    brasilapi: dict[str, FunctionTool], server: FakeServer
) -> None:
    bad = await call(brasilapi["br_cnpj_lookup"], cnpj="19.131.243/0001-98")
    assert bad.is_error
    assert "check digits" in bad.text
    assert server.seen == []
    missing = await call(brasilapi["br_cnpj_lookup"], cnpj="11.222.333/0001-81")
    assert missing.is_error
    assert "CNPJ 11.222.333/0001-81 was not found" in missing.text


async def test_banks(brasilapi: dict[str, FunctionTool]) -> None:
    by_code = await call(brasilapi["br_bank_lookup"], code=341)
    assert by_code.structured == {
        "banks": [
            {"code": "341", "name": "ITAÚ UNIBANCO S.A.", "full_name": "ITAÚ UNIBANCO S.A.", "ispb": "60701190"}
        ]
    }  # fmt: skip
    by_name = await call(brasilapi["br_bank_lookup"], name="itau")
    assert [b["code"] for b in by_name.structured["banks"]] == ["341"]
    caixa = await call(brasilapi["br_bank_lookup"], name="Caixa Econômica")
    assert caixa.structured["banks"][0]["code"] == "104"
    no_code = await call(brasilapi["br_bank_lookup"], name="pagseguro")
    assert no_code.structured["banks"][0]["code"] is None
    unknown = await call(brasilapi["br_bank_lookup"], code=999)
    assert unknown.is_error
    assert "No bank has code 999" in unknown.text
    nothing = await call(brasilapi["br_bank_lookup"])
    assert nothing.is_error


async def test_holidays(brasilapi: dict[str, FunctionTool]) -> None:
    result = await call(brasilapi["br_holidays"], year=2026)
    assert result.structured["year"] == 2026
    holidays = result.structured["holidays"]
    assert len(holidays) == 12
    assert {"date": "2026-04-21", "name": "Tiradentes", "type": "national"} in holidays
    out_of_range = await call(brasilapi["br_holidays"], year=1500)
    assert out_of_range.is_error
    assert "year" in out_of_range.text


async def test_ddd(brasilapi: dict[str, FunctionTool]) -> None:
    result = await call(brasilapi["br_ddd_lookup"], ddd=11)
    assert result.structured == {
        "ddd": 11,
        "state": "SP",
        "cities": ["BARUERI", "GUARULHOS", "OSASCO", "SÃO PAULO"],
    }
    missing = await call(brasilapi["br_ddd_lookup"], ddd=20)
    assert missing.is_error
    assert "DDD 20 is not in use" in missing.text


async def test_rates(brasilapi: dict[str, FunctionTool]) -> None:
    every = await call(brasilapi["br_interest_rates"])
    assert every.structured == {"rates_percent_per_year": {"Selic": 15, "CDI": 14.9, "IPCA": 4.68}}
    one = await call(brasilapi["br_interest_rates"], name="Selic")
    assert one.structured == {"rates_percent_per_year": {"Selic": 15}}


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (Reply(500, {"message": "Internal Server Error"}), "server error (HTTP 500"),
        (Reply(502, "<html>Bad Gateway</html>", {"Content-Type": "text/html"}), "HTTP 502"),
        (Reply(429, {"message": "Too many requests"}, {"Retry-After": "7"}), "Try again in 7 seconds"),
        (Reply(200, "<html>captive portal</html>", {"Content-Type": "text/html"}), "not valid JSON"),
        (Reply(200, {"unexpected": "object"}), "not a JSON array"),
        (Reply(200, [1, 2, 3]), "not a JSON object"),
        (Reply(400, {"message": "Parâmetro inválido"}), "rejected the request (HTTP 400 Bad Request): Parâmetro inválido"),
    ],
)  # fmt: skip
async def test_upstream_failures_become_clear_errors(
    server: FakeServer, local_policy: EgressPolicy, reply: Reply, fragment: str
) -> None:
    server.reply("/api/feriados/v1/2026", reply)
    tools = {t.name: t for t in brazil_tools(base_url=f"{server.url}/api", egress=local_policy)}
    result = await call(tools["br_holidays"], year=2026)
    assert result.is_error
    assert "BrasilAPI" in result.text
    assert fragment in result.text, result.text


async def test_retryable_failures_are_marked(
    server: FakeServer, local_policy: EgressPolicy
) -> None:
    from toolwire.errors import RetryableError

    server.reply("/api/ddd/v1/11", Reply(503, {"message": "busy"}, {"Retry-After": "2"}))
    tools = {t.name: t for t in brazil_tools(base_url=f"{server.url}/api", egress=local_policy)}
    result = await call(tools["br_ddd_lookup"], ddd=11)
    assert isinstance(result.error, RetryableError)
    assert result.error.retry_after == 2.0


async def test_default_policy_refuses_a_local_base_url(server: FakeServer) -> None:
    tools = {t.name: t for t in brazil_tools(base_url=f"{server.url}/api")}
    result = await call(tools["br_ddd_lookup"], ddd=11)
    assert result.is_error
    assert result.text.startswith("Blocked request to http://127.0.0.1:")
    assert server.seen == []


def test_br_tools_list() -> None:
    names = [t.name for t in br_tools]
    assert names == [
        "br_validate_cpf",
        "br_validate_cnpj",
        "br_cep_lookup",
        "br_cnpj_lookup",
        "br_bank_lookup",
        "br_holidays",
        "br_ddd_lookup",
        "br_interest_rates",
    ]
    for item in br_tools:
        assert item.annotations.read_only_hint is True
        assert item.description
