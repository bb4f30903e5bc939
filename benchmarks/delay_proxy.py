"""A TCP proxy on loopback that delays each direction by half a round-trip time and counts round trips
(the client speaking again after the server said ReadyForQuery starts a new one; a connection's
start-up and authentication count as one): an SSH tunnel or a bastion in
another region, on one machine. Used by benchmarks/bench_roundtrips.py and tests/test_monitor_roundtrips.py.

It can also play a link that dies silently (a NAT or a tunnel that lost its state): `black_hole()`
makes every established connection swallow what either side sends, without closing anything, while
new connections pass (or are swallowed too, with `new_too=True`, until `open_new()`); `hole_after`
swallows each new connection once its client has sent that many chunks (used by tests/test_dead_link.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time

# The requests a client may send before its startup message, each answered by one byte ('N' or 'S'):
# SSLRequest and GSSENCRequest (length 8, then their codes).
_ONE_BYTE_ANSWERS = (b"\x00\x00\x00\x08\x04\xd2\x16\x2f", b"\x00\x00\x00\x08\x04\xd2\x16\x30")


def ready_for_query(buf: bytearray) -> bool:
    r"""Consume the whole server messages at the start of `buf` (type byte, int32 length including
    itself); True if one was ReadyForQuery ('Z'), which the server sends only when it waits for the
    client. Framed, so a data row that happens to hold 'Z' and a length of 5 is not taken for one.

    >>> buf = bytearray(b"D\x00\x00\x00\x0aZ\x00\x00\x00\x05I" + b"Z\x00\x00\x00\x05")
    >>> ready_for_query(buf), bytes(buf)  # a data row holding those bytes, then a 'Z' not whole yet
    (False, b'Z\x00\x00\x00\x05')
    >>> buf += b"I"; ready_for_query(buf), bytes(buf)
    (True, b'')
    """
    ready = False
    while len(buf) >= 5:
        length = int.from_bytes(buf[1:5], "big")
        if len(buf) < 1 + length:
            break
        ready = ready or buf[0] == ord("Z")
        del buf[: 1 + length]
    return ready


_FLUSH = b"H\x00\x00\x00\x04"


def only_flushes(data: bytes) -> bool:
    r"""The chunk is nothing but Flush messages, which the server answers with no ReadyForQuery.
    psycopg ends a pipeline with a Sync and then a Flush, sent apart; on a loaded machine the Sync's
    ReadyForQuery can reach the proxy before the Flush does, and the Flush was taken for the next
    round trip (which then went uncounted: a poll counted 3 and the next 1).

    >>> only_flushes(b"H\x00\x00\x00\x04"), only_flushes(b"H\x00\x00\x00\x04Q\x00\x00\x00\x05")
    (True, False)
    """
    return bool(data) and data == _FLUSH * (len(data) // len(_FLUSH))


class DelayProxy:
    """127.0.0.1:<port> -> upstream, each direction delayed by rtt/2, counting round trips."""

    def __init__(self, upstream: dict[str, str]) -> None:
        self.upstream = upstream
        self.one_way_s = 0.0
        # round trips: the times a client spoke again after the server said ReadyForQuery, i.e.
        # after it had waited for an answer. Counting "client speaks after the server spoke" instead
        # counted one pipeline twice whenever the client flushed it in two chunks and the server
        # answered the first before the second arrived (a loaded machine: 3 round trips for 2).
        self.round_trips = 0
        self._answered: dict[int, bool] = {}  # connection -> the server said ReadyForQuery since it spoke
        self._unframed: dict[int, bytearray] = {}  # connection -> a server message not whole yet
        self._one_byte: dict[int, int] = {}  # connection -> one-byte answers (SSL, GSS) the server owes
        self.by_port: dict[int, int] = {}  # round trips per client port (one connection's, see trips_of)
        self._port: dict[int, int] = {}  # connection -> its client's port
        self.port = 0
        self.hole_after: int | None = None  # swallow each new connection after this many client chunks
        self._next_id = 0
        self._live: set[int] = set()
        self._holed: set[int] = set()
        self._hole_new = False
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._client, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _open_upstream(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        host = self.upstream.get("host", "/tmp")
        port = self.upstream.get("port", "5432")
        if host.startswith("/"):
            return await asyncio.open_unix_connection(f"{host}/.s.PGSQL.{port}")
        return await asyncio.open_connection(host, int(port))

    def trips_of(self, conn: object) -> int:
        """Round trips so far on one psycopg connection through this proxy (others, such as a
        monitor's background readers on their own connections, are not counted)."""
        fd = conn.pgconn.socket  # type: ignore[attr-defined]
        with socket.socket(fileno=os.dup(fd)) as sock:
            return self.by_port.get(sock.getsockname()[1], 0)

    def black_hole(self, *, new_too: bool = False) -> None:
        """Every established connection swallows all traffic from now on; new ones too if `new_too`."""
        self._holed |= self._live
        self._hole_new = new_too

    def open_new(self) -> None:
        """New connections pass again (the established, swallowed ones stay swallowed)."""
        self._hole_new = False

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await self._open_upstream()
        cid, self._next_id = self._next_id, self._next_id + 1
        self._answered[cid] = True  # the startup message is the connection's first round trip
        self._port[cid] = writer.get_extra_info("peername")[1]
        self._live.add(cid)
        if self._hole_new:
            self._holed.add(cid)
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, "client", cid), self._pipe(up_reader, writer, "server", cid)
            )
        finally:
            self._live.discard(cid)
            self._answered.pop(cid, None)
            self._unframed.pop(cid, None)
            self._one_byte.pop(cid, None)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, side: str, cid: int) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            try:
                while True:
                    due, data = await queue.get()
                    if not data:
                        break
                    await asyncio.sleep(max(0.0, due - time.monotonic()))
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:  # the other side hung up first: a normal end here
                pass
            dst.close()

        sender = asyncio.create_task(deliver())
        chunks = 0
        try:
            while data := await src.read(65536):
                if side == "client":
                    chunks += 1
                    if self.hole_after is not None and chunks > self.hole_after:
                        self._holed.add(cid)
                if cid in self._holed:
                    continue  # a dead link: the bytes vanish, nothing closes
                if side == "client" and data in _ONE_BYTE_ANSWERS:
                    self._one_byte[cid] = self._one_byte.get(cid, 0) + 1
                if side == "client" and self._answered.get(cid) and not only_flushes(data):
                    self.round_trips += 1
                    port = self._port.get(cid, 0)
                    self.by_port[port] = self.by_port.get(port, 0) + 1
                    self._answered[cid] = False
                elif side == "server":
                    buf = self._unframed.setdefault(cid, bytearray())
                    buf += data
                    while self._one_byte.get(cid) and buf:  # 'N' (or 'S') to an SSL or GSS request
                        del buf[:1]
                        self._one_byte[cid] -= 1
                    if ready_for_query(buf):
                        self._answered[cid] = True
                queue.put_nowait((time.monotonic() + self.one_way_s, data))
        except ConnectionError:
            pass
        queue.put_nowait((0.0, b""))
        await sender
