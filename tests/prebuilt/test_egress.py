"""The egress guard against hostile URLs, DNS answers and redirect chains, with real local servers."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prebuilt_fakes import FakeDNS, FakeServer, Reply

from toolwire.errors import RetryableError, ToolError
from toolwire.prebuilt import (
    EgressBlocked,
    EgressPolicy,
    EgressTimeout,
    EgressTransport,
    address_block_reason,
    guarded_request,
)

pytestmark = pytest.mark.anyio

HOSTILE_DNS = {
    "internal.test": ["10.0.0.5"],
    "metadata.test": ["169.254.169.254"],
    "mixed.test": ["93.184.216.34", "127.0.0.1"],
    "v6local.test": ["::1"],
    "ula.test": ["fd00::1"],
    "mapped.test": ["::ffff:10.0.0.1"],
    "cgnat.test": ["100.64.1.1"],
    "nat64.test": ["64:ff9b::a9fe:a9fe"],
    "zero.test": ["0.0.0.0"],
    "127.0.0.1.nip.io": ["127.0.0.1"],
}

# (url, a fragment the refusal must mention)
HOSTILE_URLS: list[tuple[str, str]] = [
    ("http://127.0.0.1/", "loopback"),
    ("http://127.0.0.1:8080/admin", "loopback"),
    ("http://127.255.255.254/", "loopback"),
    ("https://127.0.0.1:443/", "loopback"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://0/", "non-standard spelling"),
    ("http://2130706433/", "non-standard spelling of IPv4 address 127.0.0.1"),
    ("http://0x7f000001/", "127.0.0.1"),
    ("http://0x7f.1/", "127.0.0.1"),
    ("http://0x7f.0x0.0x0.0x1/", "127.0.0.1"),
    ("http://0177.0.0.1/", "127.0.0.1"),
    ("http://0177.1/", "127.0.0.1"),
    ("http://127.1/", "127.0.0.1"),
    ("http://127.0.1/", "127.0.0.1"),
    ("http://017700000001/", "127.0.0.1"),
    ("http://127.000.000.001/", "127.0.0.1"),
    ("http://3232235777/", "192.168.1.1"),
    ("http://999.1.1.1/", "not a valid IPv4"),
    ("http://1.2.3.4.5/", "not a valid IPv4"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://172.31.255.255/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://100.127.255.254/", "carrier-grade NAT"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://192.0.2.1/", "documentation"),
    ("http://198.51.100.7/", "documentation"),
    ("http://203.0.113.9/", "documentation"),
    ("http://224.0.0.1/", "multicast"),
    ("http://239.255.255.250/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "broadcast"),
    ("http://192.0.0.8/", "IETF protocol"),
    ("http://[::1]/", "loopback"),
    ("http://[::]/", "unspecified"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "IPv4-mapped form of 127.0.0.1"),
    ("http://[::ffff:a9fe:a9fe]/", "169.254.169.254"),
    ("http://[64:ff9b::7f00:1]/", "NAT64 form of 127.0.0.1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "NAT64 form of 169.254.169.254"),
    ("http://[64:ff9b:1::1]/", "local-use NAT64"),
    ("http://[2002:7f00:1::1]/", "6to4 form of 127.0.0.1"),
    ("http://[2002:a00:1::]/", "6to4 form of 10.0.0.1"),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "Teredo address for 127.0.0.1"),
    ("http://[::127.0.0.1]/", "IPv4-compatible"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[fe80::1%25eth0]/", "link-local"),
    ("http://[fc00::1]/", "unique-local"),
    ("http://[fd12:3456::1]/", "unique-local"),
    ("http://[fec0::1]/", "site-local"),
    ("http://[ff02::1]/", "multicast"),
    ("http://[2001:db8::1]/", "documentation"),
    ("http://[100::1]/", "discard-only"),
    ("http://localhost/", "local machine"),
    ("http://LOCALHOST./", "local machine"),
    ("http://api.localhost/", "local machine"),
    ("http://internal.test/", "resolves to 10.0.0.5, a private"),
    ("http://metadata.test/", "resolves to 169.254.169.254"),
    ("http://mixed.test/", "resolves to 127.0.0.1"),
    ("http://v6local.test/", "resolves to ::1"),
    ("http://ula.test/", "unique-local"),
    ("http://mapped.test/", "IPv4-mapped form of 10.0.0.1"),
    ("http://cgnat.test/", "carrier-grade NAT"),
    ("http://nat64.test/", "NAT64 form of 169.254.169.254"),
    ("http://zero.test/", "unspecified"),
    ("http://127.0.0.1.nip.io/", "resolves to 127.0.0.1"),
    ("http://user:pass@127.0.0.1/", "loopback"),
    ("http://good.example@127.0.0.1/", "loopback"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://127.0.0.1:25/", "scheme 'gopher'"),
    ("ftp://example.com/", "scheme 'ftp'"),
    ("dict://127.0.0.1:11211/", "scheme 'dict'"),
]


def test_the_corpus_is_large_enough() -> None:
    assert len(HOSTILE_URLS) >= 40


@pytest.mark.parametrize(("url", "fragment"), HOSTILE_URLS)
async def test_hostile_url_is_refused_with_a_reason(url: str, fragment: str) -> None:
    dns = FakeDNS(HOSTILE_DNS)
    policy = EgressPolicy(resolver=dns)
    with pytest.raises(EgressBlocked) as info:
        await guarded_request("GET", url, policy=policy)
    message = str(info.value)
    assert message.startswith("Blocked request to ")
    assert fragment.lower() in message.lower(), message
    if "://[" in url or url.split("/")[2].replace(".", "").isdigit():
        assert dns.calls == []  # literal addresses are never looked up


async def test_refusal_is_a_tool_error_with_url_and_reason() -> None:
    with pytest.raises(ToolError) as info:
        await guarded_request("GET", "http://169.254.169.254/latest/meta-data/")
    error = info.value
    assert isinstance(error, EgressBlocked)
    assert error.url == "http://169.254.169.254/latest/meta-data/"
    assert "cloud metadata" in error.reason


@pytest.mark.parametrize(
    "address",
    ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8",
     "64:ff9b::808:808", "2002:808:808::1"],
)  # fmt: skip
def test_public_addresses_pass(address: str) -> None:
    assert address_block_reason(address) is None


def test_public_name_is_pinned_to_its_checked_addresses() -> None:
    import anyio

    dns = FakeDNS({"example.test": ["93.184.216.34", "2606:2800:220:1::1"]})
    policy = EgressPolicy(resolver=dns)
    addresses = anyio.run(policy.check_url, "https://example.test/path")
    assert [str(a) for a in addresses] == ["93.184.216.34", "2606:2800:220:1::1"]
    assert dns.calls == ["example.test"]


# --- allowlist -----------------------------------------------------------------------------


async def test_allowlist_by_cidr_opens_exactly_that_range() -> None:
    dns = FakeDNS({"db.corp": ["10.1.2.3"], "other.corp": ["10.9.9.9"]})
    policy = EgressPolicy(allow=["10.1.2.0/24"], resolver=dns)
    assert [str(a) for a in await policy.check_url("http://db.corp/")] == ["10.1.2.3"]
    assert [str(a) for a in await policy.check_url("http://10.1.2.200/")] == ["10.1.2.200"]
    with pytest.raises(EgressBlocked, match=r"10\.9\.9\.9"):
        await policy.check_url("http://other.corp/")


async def test_allowlist_by_name_and_wildcard() -> None:
    dns = FakeDNS(
        {"wiki.corp": ["192.168.0.10"], "a.svc.corp": ["10.0.0.7"], "x.corp": ["10.0.0.8"]}
    )
    policy = EgressPolicy(allow=["wiki.corp", "*.svc.corp"], resolver=dns)
    assert await policy.check_url("http://wiki.corp/")
    assert await policy.check_url("http://a.svc.corp/")
    with pytest.raises(EgressBlocked):
        await policy.check_url("http://x.corp/")
    with pytest.raises(EgressBlocked):
        await policy.check_url("http://192.168.0.10/")  # the name is open, not its address


async def test_allowlist_does_not_bless_odd_spellings() -> None:
    policy = EgressPolicy(allow=["127.0.0.0/8"])
    with pytest.raises(EgressBlocked, match="non-standard spelling"):
        await policy.check_url("http://2130706433/")


async def test_ports_can_be_restricted() -> None:
    policy = EgressPolicy(ports={443})
    with pytest.raises(EgressBlocked, match="port 8443"):
        await policy.check_url("https://8.8.8.8:8443/")
    assert await policy.check_url("https://8.8.8.8/")


def test_bad_allowlist_entry_is_rejected() -> None:
    with pytest.raises(ValueError, match="allowlist"):
        EgressPolicy(allow=["10.0.0.0/99"])
    with pytest.raises(ValueError, match="timeout"):
        EgressPolicy(timeout=0)


async def test_a_single_string_allowlist_and_hashing() -> None:
    policy = EgressPolicy(allow="127.0.0.1", ports=[80])
    assert policy.allow == ("127.0.0.1",)
    assert hash(policy) == hash(EgressPolicy(allow=["127.0.0.1"], ports={80}))
    assert await policy.check_url("http://127.0.0.1/")


async def test_resolution_failure_is_a_clear_error() -> None:
    policy = EgressPolicy(resolver=FakeDNS({}))
    with pytest.raises(ToolError, match=r"Could not resolve host 'nowhere\.test'"):
        await guarded_request("GET", "http://nowhere.test/", policy=policy)


# --- connecting to the checked address -------------------------------------------------------


@pytest.fixture
def site(server: FakeServer) -> tuple[FakeServer, FakeDNS, EgressPolicy]:
    dns = FakeDNS({"site.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    policy = EgressPolicy(allow=["site.test", "other.test"], resolver=dns, timeout=10)
    return server, dns, policy


async def test_connects_to_the_checked_address_without_a_second_lookup(
    site: tuple[FakeServer, FakeDNS, EgressPolicy], monkeypatch: pytest.MonkeyPatch
) -> None:
    server, dns, policy = site
    server.reply("/hello", Reply(200, "hi", headers={"Content-Type": "text/plain"}))
    real_getaddrinfo = socket.getaddrinfo
    looked_up: list[Any] = []

    def only_literals(host: Any, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(host)
        text = host.decode() if isinstance(host, bytes) else str(host)
        ipaddress.ip_address(text)  # a name here would mean httpx did its own DNS lookup
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", only_literals)
    response = await guarded_request("GET", f"http://site.test:{server.port}/hello", policy=policy)
    assert response.status_code == 200
    assert response.text == "hi"
    assert response.url == f"http://site.test:{server.port}/hello"
    assert dns.calls == ["site.test"]
    assert server.seen[-1].headers["host"] == f"site.test:{server.port}"
    assert all(str(h) in ("127.0.0.1", "b'127.0.0.1'") for h in looked_up)


async def test_redirects_are_followed_and_reported(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, dns, policy = site
    server.reply("/a", Reply(301, headers={"Location": "/b"}))
    server.reply("/b", Reply(302, headers={"Location": f"http://other.test:{server.port}/c"}))
    server.reply("/c", Reply(200, "done", headers={"Content-Type": "text/plain"}))
    response = await guarded_request("GET", f"http://site.test:{server.port}/a", policy=policy)
    assert response.text == "done"
    assert response.url == f"http://other.test:{server.port}/c"
    assert response.redirects == (
        f"http://site.test:{server.port}/b",
        f"http://other.test:{server.port}/c",
    )
    assert dns.calls == ["site.test", "site.test", "other.test"]  # every hop checked again


REDIRECT_TARGETS: list[tuple[str, str]] = [
    ("http://127.0.0.1:{port}/secret", "loopback"),
    ("http://169.254.169.254/latest/meta-data/iam/", "link-local"),
    ("http://internal.test/", "10.0.0.5"),
    ("http://2130706433:{port}/secret", "non-standard spelling"),
    ("http://[::1]:{port}/secret", "loopback"),
    ("http://[::ffff:127.0.0.1]:{port}/secret", "IPv4-mapped"),
    ("//127.0.0.1:{port}/secret", "loopback"),
    ("http://site.test@127.0.0.1:{port}/secret", "loopback"),
    ("http://localhost:{port}/secret", "local machine"),
    ("file:///etc/passwd", "scheme 'file'"),
    ("gopher://127.0.0.1:{port}/_", "scheme 'gopher'"),
]


@pytest.mark.parametrize(("target", "fragment"), REDIRECT_TARGETS)
@pytest.mark.parametrize("status", [302, 307])
async def test_redirect_to_a_forbidden_place_is_refused(
    site: tuple[FakeServer, FakeDNS, EgressPolicy], target: str, fragment: str, status: int
) -> None:
    server, dns, policy = site
    dns.table["internal.test"] = ["10.0.0.5"]
    server.reply("/r", Reply(status, headers={"Location": target.format(port=server.port)}))
    server.reply("/secret", Reply(200, "TOP SECRET"))
    with pytest.raises(EgressBlocked) as info:
        await guarded_request("GET", f"http://site.test:{server.port}/r", policy=policy)
    assert fragment in str(info.value)
    assert [s.path for s in server.seen] == ["/r"]


async def test_a_long_chain_is_checked_at_every_hop(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/1", Reply(302, headers={"Location": "/2"}))
    server.reply("/2", Reply(302, headers={"Location": "/3"}))
    server.reply("/3", Reply(302, headers={"Location": "http://localhost/"}))
    with pytest.raises(EgressBlocked, match="local machine"):
        await guarded_request("GET", f"http://site.test:{server.port}/1", policy=policy)
    assert [s.path for s in server.seen] == ["/1", "/2", "/3"]


async def test_redirect_limit(site: tuple[FakeServer, FakeDNS, EgressPolicy]) -> None:
    server, _dns, policy = site
    server.reply("/loop", Reply(302, headers={"Location": "/loop"}))
    with pytest.raises(ToolError, match="Too many redirects"):
        await guarded_request("GET", f"http://site.test:{server.port}/loop", policy=policy)
    assert len(server.seen) == policy.max_redirects + 1


async def test_redirects_can_be_left_unfollowed(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/r", Reply(302, headers={"Location": "http://127.0.0.1/"}))
    response = await guarded_request(
        "GET", f"http://site.test:{server.port}/r", policy=policy, follow_redirects=False
    )
    assert response.status_code == 302
    assert response.headers["location"] == "http://127.0.0.1/"


async def test_credentials_do_not_follow_a_redirect_to_another_origin(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/same", Reply(302, headers={"Location": "/cross"}))
    server.reply("/cross", Reply(302, headers={"Location": f"http://other.test:{server.port}/end"}))
    server.reply("/end", Reply(200, "ok"))
    secret = {"Authorization": "Bearer s3cret", "X-Api-Key": "k", "Accept": "text/plain"}
    await guarded_request(
        "GET", f"http://site.test:{server.port}/same", policy=policy, headers=secret
    )
    same, cross, end = server.seen
    assert same.headers["authorization"] == cross.headers["authorization"] == "Bearer s3cret"
    assert cross.headers["x-api-key"] == "k"
    assert "authorization" not in end.headers
    assert "x-api-key" not in end.headers
    assert end.headers["accept"] == "text/plain"


async def test_303_turns_a_post_into_a_get_and_307_keeps_the_body(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/see-other", Reply(303, headers={"Location": "/landing"}), method="POST")
    server.reply("/temporary", Reply(307, headers={"Location": "/landing"}), method="POST")
    server.reply("/landing", Reply(200, "got"), method="GET")
    server.reply("/landing", Reply(200, "posted"), method="POST")
    base = f"http://site.test:{server.port}"
    first = await guarded_request("POST", f"{base}/see-other", policy=policy, json={"a": 1})
    assert first.text == "got"
    assert server.seen[1].method == "GET"
    assert server.seen[1].body == b""
    second = await guarded_request("POST", f"{base}/temporary", policy=policy, json={"a": 1})
    assert second.text == "posted"
    assert server.seen[3].method == "POST"
    assert server.seen[3].json() == {"a": 1}


# --- size and time caps ----------------------------------------------------------------------


async def test_response_size_is_capped_while_streaming(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/big", Reply(200, stream_bytes=50_000_000))
    response = await guarded_request(
        "GET", f"http://site.test:{server.port}/big", policy=policy, max_bytes=100_000
    )
    assert response.truncated
    assert len(response.content) == 100_000


async def test_total_time_is_capped(server: FakeServer) -> None:
    dns = FakeDNS({"slow.test": ["127.0.0.1"]})
    policy = EgressPolicy(allow=["slow.test"], resolver=dns, timeout=0.3)
    server.reply("/hang", Reply(200, hold=server.release))
    with pytest.raises(
        EgressTimeout, match=r"did not finish within 0\.3 seconds|timed out"
    ) as info:
        await guarded_request("GET", f"http://slow.test:{server.port}/hang", policy=policy)
    assert isinstance(info.value, ToolError)
    assert isinstance(info.value, RetryableError)  # with_retry may try again


async def test_async_resolver_is_supported(server: FakeServer) -> None:
    async def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    server.reply("/x", Reply(200, "async dns"))
    policy = EgressPolicy(allow=["127.0.0.1"], resolver=resolver)
    response = await guarded_request("GET", f"http://anything.test:{server.port}/x", policy=policy)
    assert response.text == "async dns"


# --- the transport in a user's own client ----------------------------------------------------


async def test_transport_guards_a_users_own_client(
    site: tuple[FakeServer, FakeDNS, EgressPolicy],
) -> None:
    server, _dns, policy = site
    server.reply("/ok", Reply(200, "fine"))
    server.reply("/r", Reply(302, headers={"Location": "http://10.0.0.1/"}))
    transport = EgressTransport(policy)
    async with httpx.AsyncClient(transport=transport, follow_redirects=True) as client:
        ok = await client.get(f"http://site.test:{server.port}/ok")
        assert ok.text == "fine"
        assert str(ok.request.url) == f"http://site.test:{server.port}/ok"
        with pytest.raises(EgressBlocked, match="private"):
            await client.get(f"http://site.test:{server.port}/r")
        with pytest.raises(EgressBlocked, match="loopback"):
            await client.get(f"http://127.0.0.1:{server.port}/ok")


# --- TLS: the certificate is still checked against the real name ------------------------------


def _tls_material(tmp_path: Path, name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolwire test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    cert_file = tmp_path / "server.pem"
    key_file = tmp_path / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    client_context = ssl.create_default_context(
        cadata=ca.public_bytes(serialization.Encoding.PEM).decode()
    )
    return server_context, client_context


@pytest.mark.parametrize(("cert_name", "ok"), [("secure.test", True), ("someone-else.test", False)])
async def test_tls_verifies_the_host_name_not_the_pinned_address(
    tmp_path: Path, cert_name: str, ok: bool
) -> None:
    server_context, client_context = _tls_material(tmp_path, cert_name)
    server = FakeServer(ssl_context=server_context)
    server.thread.start()
    try:
        server.reply("/", Reply(200, "over tls"))
        policy = EgressPolicy(
            allow=["secure.test"], resolver=FakeDNS({"secure.test": ["127.0.0.1"]})
        )
        url = f"https://secure.test:{server.port}/"
        if ok:
            response = await guarded_request("GET", url, policy=policy, verify=client_context)
            assert response.text == "over tls"
        else:
            with pytest.raises(httpx.ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|certificate"):
                await guarded_request("GET", url, policy=policy, verify=client_context)
    finally:
        server.close()


async def test_next_checked_address_is_tried_when_one_refuses(server: FakeServer) -> None:
    # The fake server listens on 127.0.0.1 only, so 127.0.0.2 refuses the connection.
    dns = FakeDNS({"multi.test": ["127.0.0.2", "127.0.0.1"]})
    policy = EgressPolicy(allow=["127.0.0.0/8"], resolver=dns)
    server.reply("/", Reply(200, "second address"))
    response = await guarded_request("GET", f"http://multi.test:{server.port}/", policy=policy)
    assert response.text == "second address"
    assert dns.calls == ["multi.test"]


@given(st.ip_addresses(v=4))
@settings(max_examples=500, deadline=None)
def test_embedded_ipv4_forms_share_the_verdict(ip: ipaddress.IPv4Address) -> None:
    verdict = address_block_reason(ip) is None
    if verdict:
        assert ip.is_global and not ip.is_multicast
    number = int(ip)
    mapped = ipaddress.IPv6Address((0xFFFF << 32) | number)
    nat64 = ipaddress.IPv6Address((0x64FF9B << 96) | number)
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (number << 80) | 1)
    for form in (mapped, nat64, sixtofour):
        assert (address_block_reason(form) is None) == verdict, form


@given(st.ip_addresses(v=6))
@settings(max_examples=500, deadline=None)
def test_allowed_ipv6_is_global_unicast(ip: ipaddress.IPv6Address) -> None:
    if address_block_reason(ip) is None:
        assert not ip.is_multicast and not ip.is_loopback and not ip.is_link_local
        embedded = ip.ipv4_mapped or ip.sixtofour
        assert (
            ip.is_global
            or embedded is not None
            or ip in ipaddress.ip_network("64:ff9b::/96")
            or ip.teredo
        )
