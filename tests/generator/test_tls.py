"""https:// targets: the generator over TLS to the real mock (and WebSockets to the
test target), with a self-signed certificate."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest

from plimsoll.api.trial import TrialState
from tests.generator.helpers import request, run
from tests.generator.mockproc import MockProcess, self_signed
from tests.generator.target import TargetState, start_target

CONFIG = {"routes": [{"name": "hello", "path": "/hello", "sizes": [{"bytes": "64"}]}]}
MIX = [{"name": "hello", "path": "/hello"}]


@pytest.fixture(scope="module")
def tls_mock(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    directory = tmp_path_factory.mktemp("tls")
    cert, key = self_signed(directory)
    process = MockProcess(CONFIG, directory, tls=(cert, key))
    yield process.url, cert
    process.stop()


async def test_verification_off_reaches_a_self_signed_target(
    tls_mock: tuple[str, Path],
) -> None:
    url, _ = tls_mock
    workload = {"mix": MIX, "arrival": "uniform", "tlsVerify": False}
    floor = {"url": f"{url}/hello", "rate": 20}
    result = await run(request(url, workload, level=100, duration=0.5, floor=floor))
    assert result.state is TrialState.DONE, result.errors
    assert result.operations["hello"].outcomes.ok == result.sent >= 45
    assert result.floor is not None
    assert result.floor.count >= 5
    assert result.floor.errors == 0
    assert result.errors == []


async def test_verification_on_refuses_an_untrusted_certificate(
    tls_mock: tuple[str, Path],
) -> None:
    url, _ = tls_mock
    result = await run(request(url, {"mix": MIX}, level=50, duration=0.3))
    outcomes = result.operations["hello"].outcomes
    assert outcomes.ok == 0
    assert outcomes.transport == outcomes.total > 0
    assert any("CERTIFICATE_VERIFY_FAILED" in error for error in result.errors), result.errors


async def test_a_ca_bundle_in_ssl_cert_file_is_trusted(
    tls_mock: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, cert = tls_mock
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    result = await run(request(url, {"mix": MIX}, level=50, duration=0.3))
    assert result.state is TrialState.DONE, result.errors
    assert result.operations["hello"].outcomes.ok == result.sent > 0


async def test_websockets_over_tls(tls_mock: tuple[str, Path]) -> None:
    _, cert = tls_mock
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_tls.load_cert_chain(cert, cert.with_name("key.pem"))
    state = TargetState(keep_alive=0.1)
    server, port = await start_target(state, server_tls)
    try:
        workload = {
            "mix": MIX,
            "tlsVerify": False,
            "streams": {"count": 6, "kind": "websocket", "path": "/ws"},
        }
        result = await run(request(f"https://127.0.0.1:{port}", workload, level=0, duration=0.5))
    finally:
        server.close()
    assert (result.streams.opened, result.streams.held_at_end) == (6, 6)
    assert state.ws_pongs >= 6
