"""Prebuilt tools: the keyless ones, the egress guard that protects them, and how they fail.

Runs offline: calculator, date/time and the Brazil document checks work locally; the HTTP tools
show what the egress guard refuses (internal addresses, odd spellings) before any connection.
"""

from __future__ import annotations

import asyncio

from toolwire.prebuilt import (
    available,
    br_validate_cnpj,
    br_validate_cpf,
    calculator,
    current_datetime,
    fetch_url,
)


async def main() -> None:
    print("usable here:", ", ".join(t.name for t in available()))

    for expression in [
        "17% of 2,340",
        "sqrt(2) * 10^3",
        "factorial(5) / 3",
        "9**9**9",
        "open('x')",
    ]:
        result = await calculator.invoke({"expression": expression})
        print(f"calculator({expression!r}) -> {'error: ' if result.is_error else ''}{result.text}")

    now = await current_datetime.invoke({"timezone": "America/Recife"})
    print("current_datetime ->", now.structured["iso"], now.structured["weekday"])
    bad_zone = await current_datetime.invoke({"timezone": "Mars/Olympus_Mons"})
    print("bad zone ->", bad_zone.text[:80])

    for cpf in ["529.982.247-25", "111.111.111-11"]:
        print(f"cpf {cpf} ->", (await br_validate_cpf.invoke({"cpf": cpf})).structured["valid"])
    cnpj = await br_validate_cnpj.invoke({"cnpj": "12.ABC.345/01DE-35"})
    print("alphanumeric cnpj ->", cnpj.structured["valid"], cnpj.structured["kind"])

    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:8080/admin",
        "http://0x7f000001/",
        "file:///etc/passwd",
    ]:
        refused = await fetch_url.invoke({"url": url})
        print(f"fetch_url({url}) -> {refused.text}")


if __name__ == "__main__":
    asyncio.run(main())
