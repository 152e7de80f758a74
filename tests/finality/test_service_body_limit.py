"""The replay service refuses request bodies past 64 KiB with 413, declared or streamed, without reading them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx

from stopwise.finality import LocalService, ServiceStore, create_service_app
from stopwise.finality._body_limit import MAX_BODY_BYTES

CHUNK = b" " * 65_536
WRITE = json.dumps({"value": "v", "run": "A"}).encode()
JSON = {"content-type": "application/json"}


class Source:
    """A chunked request body: a valid JSON write padded with ``n_chunks`` of blanks; counts what was pulled."""

    def __init__(self, n_chunks: int) -> None:
        self.n_chunks = n_chunks
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(self.n_chunks):
            self.pulled += 1
            yield CHUNK
        yield WRITE


def test_the_limit_is_64_kib() -> None:
    assert MAX_BODY_BYTES == 65_536


def test_a_declared_large_body_is_refused_before_it_is_read() -> None:
    async def main() -> None:
        store = ServiceStore()
        transport = httpx.ASGITransport(app=create_service_app(store))
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            big = await client.put("/ns/n/items/k", content=b" " * (MAX_BODY_BYTES + 1 - len(WRITE)) + WRITE, headers=JSON)
            assert big.status_code == 413
            assert "request body larger than 65,536 bytes" in big.json()["detail"]
            fits = await client.put("/ns/n/items/k", content=b" " * (MAX_BODY_BYTES - len(WRITE)) + WRITE, headers=JSON)
            assert fits.status_code == 202, fits.text
        assert [op.item for op in store.operations.values()] == ["k"]  # only the body that fits was applied
        store.close()

    asyncio.run(main())


def test_a_chunked_body_is_refused_once_the_bytes_pass_the_limit() -> None:
    async def main() -> None:
        store = ServiceStore()
        transport = httpx.ASGITransport(app=create_service_app(store))
        async with httpx.AsyncClient(transport=transport, base_url="http://replay") as client:
            source = Source(n_chunks=8192)  # 512 MiB if it were read to the end
            response = await client.put("/ns/n/items/k", content=source, headers=JSON)
            assert "content-length" not in response.request.headers
            assert response.status_code == 413, response.text
            assert source.pulled == 2  # 128 KiB pulled: the second chunk passed the limit
            small = Source(n_chunks=0)
            assert (await client.put("/ns/n/items/k", content=small, headers=JSON)).status_code == 202
        assert len(store.operations) == 1
        store.close()

    asyncio.run(main())


def test_the_loopback_server_answers_413_to_a_512_mb_content_length() -> None:
    """A raw client declares 512 MiB and sends only its first bytes: the answer comes at once."""

    async def main() -> None:
        async with LocalService() as service:
            assert service.port is not None
            reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
            head = f"PUT /ns/n/items/k HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {512 << 20}\r\n\r\n"
            writer.write(head.encode() + WRITE)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(4096), timeout=10)
            writer.close()
            assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
            assert b"request body larger than 65,536 bytes" in answer
            async with httpx.AsyncClient(base_url=service.url) as client:
                assert (await client.get("/health")).status_code == 200
        assert service.store.operations == {}

    asyncio.run(main())
