"""The replay service: its HTTP API in-process, and the loopback server's clean start and stop."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from stopwise.errors import ServiceError
from stopwise.finality import LocalService, ServiceStore, create_service_app


def in_process(test: Callable[[httpx.AsyncClient, ServiceStore], Awaitable[None]]) -> None:
    """Run ``test`` against the ASGI app on one event loop (delayed writes need the loop)."""

    async def main() -> None:
        store = ServiceStore()
        transport = httpx.ASGITransport(app=create_service_app(store))
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            await test(client, store)
        store.close()

    asyncio.run(main())


def put(
    client: httpx.AsyncClient, ns: str, item: str, value: str, run: str, delay_ms: int
) -> Awaitable[httpx.Response]:
    return client.put(f"/ns/{ns}/items/{item}", json={"value": value, "run": run, "delay_ms": delay_ms})


def port_is_closed(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) != 0


def test_immediate_and_delayed_writes() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        now = await put(client, "ns1", "k", "v0", "A", 0)
        assert now.status_code == 202 and now.json()["op"]["status"] == "applied"
        later = (await put(client, "ns1", "k", "v1", "B", 40)).json()["op"]
        assert later["status"] == "pending" and later["settled_ms"] is None
        snapshot = (await client.get("/ns/ns1/items/k")).json()
        assert (snapshot["value"], snapshot["run"]) == ("v0", "A")
        view = (await client.get("/ns/ns1", params={"run": "B"})).json()
        assert view["pending"] == [later["id"]] and [op["run"] for op in view["ops"]] == ["B"]
        settled = (await client.get("/ns/ns1", params={"wait_ms": 2000})).json()
        assert settled["pending"] == [] and settled["items"]["k"]["value"] == "v1"
        op = settled["ops"][1]
        assert op["status"] == "applied" and op["settled_ms"] - op["accepted_ms"] >= 40
        assert store.pending() == []

    in_process(check)


def test_cancellation_before_and_after_the_write_lands() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        op = (await put(client, "ns", "k", "v", "A", 200)).json()["op"]
        answer = (await client.post(f"/ops/{op['id']}/cancel")).json()
        assert answer["cancelled"] is True and answer["op"]["status"] == "cancelled"
        await asyncio.sleep(0.25)
        assert (await client.get("/ns/ns/items/k")).json()["value"] is None  # never applied
        done = (await put(client, "ns", "k", "w", "A", 0)).json()["op"]
        late = (await client.post(f"/ops/{done['id']}/cancel")).json()
        assert late["cancelled"] is False and late["op"]["status"] == "applied"
        waited = (await client.get(f"/ops/{op['id']}", params={"wait_ms": 10})).json()
        assert waited["op"]["status"] == "cancelled"

    in_process(check)


def test_generic_cleanup_leaves_pending_writes_to_land() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        await put(client, "ns", "a", "1", "A", 0)
        await put(client, "ns", "b", "2", "A", 30)
        cleared = (await client.delete("/ns/ns")).json()
        assert cleared["removed"] == ["a"] and len(cleared["pending"]) == 1
        view = (await client.get("/ns/ns", params={"wait_ms": 2000})).json()
        assert list(view["items"]) == ["b"]  # the delayed write came back after the cleanup

    in_process(check)


@pytest.mark.parametrize(
    ("method", "url", "body", "status"),
    [
        ("GET", "/ops/op-999999", None, 404),
        ("POST", "/ops/op-999999/cancel", None, 404),
        ("PUT", "/ns/bad name/items/k", {"value": "v", "run": "A"}, 422),
        ("PUT", "/ns/ns/items/k", {"value": "v", "run": "A", "delay_ms": -1}, 422),
        ("PUT", "/ns/ns/items/k", {"value": "v", "run": "A", "delay_ms": 60_001}, 422),
        ("PUT", "/ns/ns/items/k", {"value": "v", "run": "A", "colour": "red"}, 422),
        ("GET", "/ns/ns?wait_ms=999999", None, 422),
    ],
)
def test_bad_requests_are_refused(method: str, url: str, body: dict[str, Any] | None, status: int) -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        response = await client.request(method, url, json=body)
        assert response.status_code == status

    in_process(check)


def test_local_service_binds_loopback_and_closes_its_port() -> None:
    handler = signal.getsignal(signal.SIGINT)

    async def main() -> int:
        service = LocalService()
        with pytest.raises(ServiceError, match="not running"):
            _ = service.url
        async with service:
            port = service.port
            assert port is not None and service.url == f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=service.url, trust_env=False) as client:
                assert (await client.get("/health")).json()["status"] == "ok"
                await client.put("/ns/n/items/k", json={"value": "v", "run": "A", "delay_ms": 5000})
            with pytest.raises(ServiceError, match="already running"):
                await service.start()
        assert service.port is None
        await service.stop()  # a second stop is harmless
        return port

    port = asyncio.run(main())
    assert port_is_closed(port)
    assert signal.getsignal(signal.SIGINT) is handler


def test_local_service_stops_and_closes_its_port_when_the_block_raises() -> None:
    ports: list[int] = []
    handler = signal.getsignal(signal.SIGINT)

    async def main() -> None:
        async with LocalService() as service:
            assert service.port is not None
            ports.append(service.port)
            async with httpx.AsyncClient(base_url=service.url, trust_env=False) as client:
                await client.put("/ns/n/items/k", json={"value": "v", "run": "A", "delay_ms": 5000})
                raise RuntimeError("the runner failed")

    with pytest.raises(RuntimeError, match="the runner failed"):
        asyncio.run(main())
    assert port_is_closed(ports[0])
    assert signal.getsignal(signal.SIGINT) is handler


CHILD = """
import sys
from stopwise.finality import LocalService, run_controlled_replay

start = LocalService.start

async def announce(self):
    await start(self)
    print(self.port, flush=True)

LocalService.start = announce
said = False

def progress(done, total):
    global said
    if not said:  # the hand-shake: a trial has finished, the next are in flight
        print("running", flush=True)
        said = True

try:
    run_controlled_replay(progress=progress)
except KeyboardInterrupt:
    sys.exit(42)
"""


def test_ctrl_c_stops_the_replay_and_frees_the_port() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        assert child.stdout.readline().strip() == "running"  # a trial finished: the replay is under way
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 42, err
    assert "Traceback" not in err
    assert port_is_closed(port)


def in_process_logical(test: Callable[[httpx.AsyncClient, ServiceStore], Awaitable[None]]) -> None:
    async def main() -> None:
        store = ServiceStore(clock="logical")
        transport = httpx.ASGITransport(app=create_service_app(store))
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            await test(client, store)
        store.close()

    asyncio.run(main())


def test_logical_clock_applies_writes_only_when_time_is_let_pass() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        assert (await client.get("/health")).json()["clock"] == "logical"
        first = (await put(client, "ns", "k", "a", "A", 25)).json()
        assert first["op"]["status"] == "pending" and first["clock_ms"] == 0.0
        await asyncio.sleep(0.06)  # real time passing changes nothing
        assert (await client.get("/ns/ns/items/k")).json()["value"] is None
        (await put(client, "ns", "k", "b", "B", 0)).json()
        assert (await client.get("/ns/ns/items/k")).json()["run"] == "B"
        (await put(client, "ns", "k", "c", "C", 10)).json()
        moved = (await client.post("/ns/ns/clock", json={"advance_ms": 10})).json()
        assert moved["clock_ms"] == 10.0 and moved["applied"] == ["op-000003"]
        assert moved["items"]["k"]["run"] == "C" and moved["pending"] == ["op-000001"]
        other = (await client.get("/ns/other")).json()
        assert other["clock_ms"] == 0.0  # every namespace keeps its own clock
        settled = (await client.get("/ns/ns", params={"wait_ms": 10_000})).json()
        assert settled["pending"] == [] and settled["items"]["k"]["run"] == "A" and settled["clock_ms"] == 25.0
        op = settled["ops"][0]
        assert (op["accepted_ms"], op["settled_ms"]) == (0.0, 25.0)

    in_process_logical(check)


def test_logical_clock_due_order_wait_limit_and_cancellation() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        late = (await put(client, "n", "k", "late", "A", 100)).json()["op"]
        early = (await put(client, "n", "k", "early", "B", 50)).json()["op"]
        partial = (await client.get(f"/ops/{late['id']}", params={"wait_ms": 60})).json()
        assert partial["op"]["status"] == "pending" and partial["clock_ms"] == 60.0
        assert (await client.get("/ns/n/items/k")).json()["value"] == "early"
        cancelled = (await client.post(f"/ops/{late['id']}/cancel")).json()
        assert cancelled["cancelled"] is True and cancelled["op"]["settled_ms"] == 60.0
        done = (await client.post("/ns/n/clock", json={"advance_ms": 1000})).json()
        assert done["applied"] == [] and done["items"]["k"]["value"] == "early" and early["due_ms"] == 50.0
        refused = await client.post("/ns/n/clock", json={"advance_ms": -1})
        assert refused.status_code == 422

    in_process_logical(check)


def test_the_wall_clock_cannot_be_advanced() -> None:
    async def check(client: httpx.AsyncClient, store: ServiceStore) -> None:
        answer = await client.post("/ns/n/clock", json={"advance_ms": 10})
        assert answer.status_code == 409 and "wall clock" in answer.text
        with pytest.raises(ServiceError, match="wall clock"):
            store.advance("n", 10)

    in_process(check)


def test_unknown_clock_mode_is_refused() -> None:
    from stopwise.errors import InputError

    with pytest.raises(InputError, match="clock must be 'wall' or 'logical'; got 'lunar'"):
        ServiceStore(clock="lunar")  # type: ignore[arg-type]
