# ruff: noqa: E402  (the [service] extra is checked before the imports that need it)
"""The controlled-replay service: a small HTTP key-value store that applies writes after a delay.

The paper's replay (appendix B) needs "a local HTTP service [that] retains state between runs
and applies each write after its scheduled delay", bound to 127.0.0.1 on an ephemeral port and
creating no external resources. This is that service (FastAPI, served by uvicorn).

State is kept per *namespace*; an item holds the last value written to it (last writer wins).
A write is accepted at once and applied after ``delay_ms`` (0: applied before the response);
until then its operation is ``pending`` and can be cancelled.

Time comes from one of two clocks (``ServiceStore(clock=...)``):

* ``"wall"`` (default): the service's monotonic clock; a write lands when its timer fires.
* ``"logical"``: every namespace keeps its own clock in milliseconds, which moves only when a
  client lets time pass (``POST /ns/{ns}/clock`` or a request with ``wait_ms``); the writes that
  fall due are then applied in due order. The controlled replay uses it, so what it observes
  depends on the order of requests only, never on how busy the machine is.

=========================================  ==============================================================
endpoint                                   meaning
=========================================  ==============================================================
``GET /health``                            liveness
``PUT /ns/{ns}/items/{item}``              write ``{"value", "run", "delay_ms"}``; answers the operation
``GET /ns/{ns}/items/{item}``              the item's value and who wrote it (``null`` when absent)
``GET /ns/{ns}?run=&wait_ms=``             items and operations of a namespace (optionally of one run);
                                           with ``wait_ms``, first waits until none of them is pending
``DELETE /ns/{ns}``                        removes the namespace's items (pending operations still land)
``GET /ops/{op}?wait_ms=``                 one operation, optionally after waiting until it settles
``POST /ops/{op}/cancel``                  cancels a pending operation; too late once it is applied
``POST /ns/{ns}/clock``                    ``{"advance_ms"}``: lets logical time pass in the namespace
                                           (logical clock only; 409 on the wall clock)
=========================================  ==============================================================

A request body may be at most 64 KiB (:data:`~stopwise.finality._body_limit.MAX_BODY_BYTES`): a
larger ``Content-Length`` is answered with 413 before the body is read, and a chunked body is
refused with 413 as soon as the bytes received pass the limit.

Every answer carries ``served_ms``, the service's monotonic clock in milliseconds; answers about
a namespace or an operation also carry ``clock_ms``, the time on that namespace's clock (equal
to ``served_ms`` on the wall clock), on which ``accepted_ms`` and ``settled_ms`` are measured, so
a runner can check that its endpoint actions came before a write's delay had elapsed.
"""

from __future__ import annotations

from stopwise._extras import require_extra

require_extra("service", "the controlled replay's local service")  # FastAPI and uvicorn: else one line naming the extra

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import uvicorn
from fastapi import FastAPI, HTTPException, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from stopwise.errors import InputError, ServiceError
from stopwise.finality._body_limit import MAX_BODY_BYTES, BodyLimit

__all__ = ["LocalService", "ServiceStore", "create_service_app"]

OperationStatus = Literal["pending", "applied", "cancelled"]
ClockMode = Literal["wall", "logical"]
_NAME = r"^[A-Za-z0-9_.:-]{1,200}$"
_MAX_DELAY_MS = 60_000
_MAX_WAIT_MS = 30_000
_Name = Annotated[str, Path(pattern=_NAME)]
_Wait = Annotated[int, Query(ge=0, le=_MAX_WAIT_MS)]
_Run = Annotated[str | None, Query(pattern=_NAME)]


@dataclass
class _Operation:
    id: str
    ns: str
    item: str
    value: str
    run: str
    delay_ms: int
    accepted_ms: float
    due_ms: float = 0.0
    status: OperationStatus = "pending"
    settled_ms: float | None = None
    timer: asyncio.TimerHandle | None = None
    done: asyncio.Future[None] | None = None

    def view(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ns": self.ns,
            "item": self.item,
            "value": self.value,
            "run": self.run,
            "delay_ms": self.delay_ms,
            "due_ms": self.due_ms,
            "status": self.status,
            "accepted_ms": self.accepted_ms,
            "settled_ms": self.settled_ms,
        }


@dataclass
class _Item:
    value: str
    run: str
    op: str


@dataclass
class ServiceStore:
    """The service's state: namespaces of items, and every operation ever accepted.

    One store lives as long as its service; it is not shared between processes.

    Parameters
    ----------
    clock : {"wall", "logical"}
        ``"wall"``: delayed writes land when their timers fire. ``"logical"``: each namespace has
        its own clock, moved only by :meth:`advance` (``POST /ns/{ns}/clock``) or a request with
        ``wait_ms``; writes land when their namespace's clock reaches their due time.

    Examples
    --------
    >>> store = ServiceStore(clock="logical")
    >>> store.clock_ms("ns")
    0.0
    """

    namespaces: dict[str, dict[str, _Item]] = field(default_factory=dict)
    operations: dict[str, _Operation] = field(default_factory=dict)
    by_namespace: dict[str, list[str]] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    clock: ClockMode = "wall"
    logical_ms: dict[str, float] = field(default_factory=dict)
    _counter: int = 0

    def __post_init__(self) -> None:
        if self.clock not in ("wall", "logical"):
            raise InputError(f"clock must be 'wall' or 'logical'; got {self.clock!r}")

    def now_ms(self) -> float:
        """Milliseconds on the service's monotonic clock."""
        return (time.monotonic() - self.started) * 1000.0

    def clock_ms(self, ns: str) -> float:
        """The time on namespace ``ns``'s clock (the service's monotonic clock unless logical)."""
        if self.clock == "logical":
            return self.logical_ms.get(ns, 0.0)
        return self.now_ms()

    def advance(self, ns: str, ms: float) -> list[str]:
        """Let ``ms`` milliseconds pass on namespace ``ns``'s logical clock; returns the ops applied.

        The writes that fall due are applied in order of due time (then acceptance), each with the
        clock set to its due time, so last writer wins exactly as with real delays.
        """
        if self.clock != "logical":
            raise ServiceError("the service runs on the wall clock; only a logical clock can be advanced")
        start = self.clock_ms(ns)
        target = start + max(float(ms), 0.0)
        due = sorted(
            (op for op in self.ops_of(ns) if op.status == "pending" and op.due_ms <= target),
            key=lambda op: (op.due_ms, op.id),
        )
        for op in due:
            self.logical_ms[ns] = max(self.logical_ms.get(ns, 0.0), op.due_ms)
            self._apply(op)
        self.logical_ms[ns] = target
        return [op.id for op in due]

    def settle_logically(self, ops: list[_Operation], wait_ms: int) -> None:
        """Logical clock: let time pass until ``ops`` are settled, by ``wait_ms`` at most per namespace."""
        for ns in dict.fromkeys(op.ns for op in ops if op.status == "pending"):
            latest = max(op.due_ms for op in ops if op.ns == ns and op.status == "pending")
            self.advance(ns, min(latest - self.clock_ms(ns), float(wait_ms)))

    def pending(self) -> list[str]:
        """Ids of operations not yet applied or cancelled."""
        return [op.id for op in self.operations.values() if op.status == "pending"]

    def write(self, ns: str, item: str, value: str, run: str, delay_ms: int) -> _Operation:
        self._counter += 1
        op = _Operation(
            id=f"op-{self._counter:06d}",
            ns=ns,
            item=item,
            value=value,
            run=run,
            delay_ms=delay_ms,
            accepted_ms=self.clock_ms(ns),
        )
        op.due_ms = op.accepted_ms + delay_ms
        self.operations[op.id] = op
        self.by_namespace.setdefault(ns, []).append(op.id)
        if delay_ms == 0:
            self._apply(op)
        elif self.clock == "wall":
            loop = asyncio.get_running_loop()
            op.done = loop.create_future()
            op.timer = loop.call_later(delay_ms / 1000.0, self._apply, op)
        return op

    def _settle(self, op: _Operation, status: OperationStatus) -> None:
        op.status = status
        op.settled_ms = self.clock_ms(op.ns)
        op.timer = None
        if op.done is not None and not op.done.done():
            op.done.set_result(None)

    def _apply(self, op: _Operation) -> None:
        if op.status != "pending":
            return
        self.namespaces.setdefault(op.ns, {})[op.item] = _Item(op.value, op.run, op.id)
        self._settle(op, "applied")

    def cancel(self, op: _Operation) -> bool:
        if op.status != "pending":
            return False
        if op.timer is not None:
            op.timer.cancel()
        self._settle(op, "cancelled")
        return True

    def ops_of(self, ns: str, run: str | None = None) -> list[_Operation]:
        ops = (self.operations[i] for i in self.by_namespace.get(ns, []))
        return [op for op in ops if run is None or op.run == run]

    def close(self) -> None:
        """Cancel the timers of pending operations (they will never be applied)."""
        for op in self.operations.values():
            if op.status == "pending":
                if op.timer is not None:
                    op.timer.cancel()
                    op.timer = None
                if op.done is not None and not op.done.done():
                    op.done.cancel()


async def _wait(store: ServiceStore, ops: list[_Operation], wait_ms: int) -> None:
    if store.clock == "logical":
        if wait_ms > 0:
            store.settle_logically(ops, wait_ms)
        return
    futures = [op.done for op in ops if op.status == "pending" and op.done is not None]
    if futures and wait_ms > 0:
        await asyncio.wait(futures, timeout=wait_ms / 1000.0)


class _Advance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    advance_ms: int = Field(ge=0, le=_MAX_DELAY_MS)


class _Write(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str = Field(max_length=1000)
    run: str = Field(pattern=_NAME)
    delay_ms: int = Field(default=0, ge=0, le=_MAX_DELAY_MS)


def create_service_app(store: ServiceStore | None = None) -> FastAPI:
    """The replay service as an ASGI app (serve it with :class:`LocalService`, or test it in-process).

    Parameters
    ----------
    store : ServiceStore, optional
        The state to serve (default: a new, empty one); kept on ``app.state.store``.

    Examples
    --------
    >>> from stopwise.finality import create_service_app
    >>> app = create_service_app()
    >>> sorted(r.path for r in app.routes if r.path.startswith("/ns"))
    ['/ns/{ns}', '/ns/{ns}', '/ns/{ns}/clock', '/ns/{ns}/items/{item}', '/ns/{ns}/items/{item}']
    """
    state = store if store is not None else ServiceStore()
    app = FastAPI(title="stopwise replay service", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = state
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)  # 413 past 64 KiB, declared or streamed

    def namespace_view(ns: str, run: str | None) -> dict[str, Any]:
        ops = state.ops_of(ns, run)
        items = state.namespaces.get(ns, {})
        return {
            "ns": ns,
            "items": {k: {"value": v.value, "run": v.run, "op": v.op} for k, v in sorted(items.items())},
            "ops": [op.view() for op in ops],
            "pending": [op.id for op in ops if op.status == "pending"],
            "clock_ms": state.clock_ms(ns),
            "served_ms": state.now_ms(),
        }

    def op_view(op: _Operation) -> dict[str, Any]:
        return {"op": op.view(), "clock_ms": state.clock_ms(op.ns), "served_ms": state.now_ms()}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "clock": state.clock, "served_ms": state.now_ms()}

    @app.put("/ns/{ns}/items/{item}", status_code=202)
    async def write(ns: _Name, item: _Name, body: _Write) -> dict[str, Any]:
        op = state.write(ns, item, body.value, body.run, body.delay_ms)
        return op_view(op)

    @app.post("/ns/{ns}/clock")
    async def advance(ns: _Name, body: _Advance) -> dict[str, Any]:
        if state.clock != "logical":
            raise HTTPException(status_code=409, detail="the service runs on the wall clock")
        applied = state.advance(ns, body.advance_ms)
        view = namespace_view(ns, None)
        view["applied"] = applied
        return view

    @app.get("/ns/{ns}/items/{item}")
    async def read(ns: _Name, item: _Name) -> dict[str, Any]:
        found = state.namespaces.get(ns, {}).get(item)
        return {
            "ns": ns,
            "item": item,
            "value": found.value if found else None,
            "run": found.run if found else None,
            "op": found.op if found else None,
            "clock_ms": state.clock_ms(ns),
            "served_ms": state.now_ms(),
        }

    @app.get("/ns/{ns}")
    async def namespace(ns: _Name, run: _Run = None, wait_ms: _Wait = 0) -> dict[str, Any]:
        await _wait(state, state.ops_of(ns, run), wait_ms)
        return namespace_view(ns, run)

    @app.delete("/ns/{ns}")
    async def clear(ns: _Name) -> dict[str, Any]:
        removed = sorted(state.namespaces.pop(ns, {}))
        view = namespace_view(ns, None)
        view["removed"] = removed
        return view

    def operation(op_id: str) -> _Operation:
        op = state.operations.get(op_id)
        if op is None:
            raise HTTPException(status_code=404, detail=f"no operation {op_id!r}")
        return op

    @app.get("/ops/{op_id}")
    async def get_op(op_id: _Name, wait_ms: _Wait = 0) -> dict[str, Any]:
        op = operation(op_id)
        await _wait(state, [op], wait_ms)
        return op_view(op)

    @app.post("/ops/{op_id}/cancel")
    async def cancel(op_id: _Name) -> dict[str, Any]:
        op = operation(op_id)
        cancelled = state.cancel(op)
        return {**op_view(op), "cancelled": cancelled}

    return app


class _QuietServer(uvicorn.Server):
    """A uvicorn server that leaves the process's signal handlers alone.

    The caller owns Ctrl-C: it cancels the caller's task, whose ``async with`` then stops the
    service cleanly (uvicorn's own handlers would stop the server under a running replay).
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class LocalService:
    """The replay service running on 127.0.0.1 on an ephemeral port, as an async context manager.

    The service runs on the caller's event loop (so its timers and the runner's requests share
    one clock and no thread switches delay them). Leaving the ``async with`` block stops it and
    closes its port, also when the block raised.

    Parameters
    ----------
    store : ServiceStore, optional
        The state to serve (default: a new one).
    startup_timeout_s, shutdown_timeout_s : float, optional
        Limits for starting and stopping; exceeding them raises :class:`~stopwise.errors.ServiceError`
        (on shutdown, after forcing the server down).

    Examples
    --------
    >>> import asyncio, httpx
    >>> from stopwise.finality import LocalService
    >>> async def main():
    ...     async with LocalService() as service:
    ...         async with httpx.AsyncClient(base_url=service.url) as client:
    ...             return (await client.get("/health")).json()["status"]
    >>> asyncio.run(main())
    'ok'
    """

    host = "127.0.0.1"

    def __init__(
        self,
        *,
        store: ServiceStore | None = None,
        startup_timeout_s: float = 10.0,
        shutdown_timeout_s: float = 10.0,
    ) -> None:
        self.store = store if store is not None else ServiceStore()
        self.startup_timeout_s = startup_timeout_s
        self.shutdown_timeout_s = shutdown_timeout_s
        self.port: int | None = None
        self._server: Any = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` once started."""
        if self.port is None:
            raise ServiceError("the replay service is not running; use it inside `async with LocalService()`")
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        """Bind an ephemeral port on 127.0.0.1 and serve until :meth:`stop`."""
        if self._task is not None:
            raise ServiceError("the replay service is already running")
        # IPPROTO_TCP makes asyncio set TCP_NODELAY on accepted connections; without it, small
        # responses wait ~40 ms for delayed ACKs and the replay's millisecond schedule breaks.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.bind((self.host, 0))
        except OSError as exc:
            sock.close()
            raise ServiceError(f"cannot bind {self.host} on an ephemeral port: {exc}") from exc
        config = uvicorn.Config(
            create_service_app(self.store),
            log_config=None,
            log_level=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        server = _QuietServer(config)
        self._socket, self._server, self.port = sock, server, sock.getsockname()[1]
        self._task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
        deadline = time.monotonic() + self.startup_timeout_s
        while not server.started:
            if self._task.done() or time.monotonic() > deadline:
                error = self._task.exception() if self._task.done() and not self._task.cancelled() else None
                await self.stop()
                raise ServiceError(f"the replay service did not start on {self.host}: {error or 'timed out'}")
            await asyncio.sleep(0.001)

    async def stop(self) -> None:
        """Stop serving, cancel pending timers and close the port (safe to call twice)."""
        task, server, sock = self._task, self._server, self._socket
        self._task = self._server = self._socket = None
        self.port = None
        self.store.close()
        problem: BaseException | None = None
        if task is not None and server is not None:
            server.should_exit = True
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=self.shutdown_timeout_s)
            except TimeoutError:
                server.force_exit = True
                task.cancel()
                problem = TimeoutError(f"no clean stop within {self.shutdown_timeout_s} s")
            except Exception as exc:  # the server failed while running
                problem = exc
            if not task.done():
                try:
                    await asyncio.wait_for(task, timeout=1.0)
                except (asyncio.CancelledError, TimeoutError, Exception):
                    pass
        if sock is not None:
            sock.close()
        if problem is not None:
            raise ServiceError(f"the replay service did not stop cleanly: {problem}") from problem

    async def __aenter__(self) -> LocalService:
        await self.start()
        return self

    async def __aexit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        if exc is None:
            await self.stop()
            return
        try:
            await self.stop()
        except ServiceError as stop_error:  # keep the original error; say the stop failed too
            exc.add_note(str(stop_error))
