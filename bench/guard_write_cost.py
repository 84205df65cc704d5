#!/usr/bin/env python3
"""What a socket write costs while a strict replay's network guard is active.

The guard patches ``socket.socket.send`` / ``sendall`` / ``sendto`` / ``sendmsg``,
``ssl.SSLSocket.send`` / ``sendall`` and ``ssl.SSLObject.write`` while a guard is active
(none otherwise). This times each write in CPU ns a call with no guard, and what an
active guard adds (the median over ``--rounds`` rounds of ``--n`` calls, alternating),
for a 64-byte write that starts no HTTP request (the common case: a database's, an
exporter's, a TLS record's bytes) and one that starts a request to a non-LLM path on
loopback (parsed, then let through)::

    PYTHONPATH=src .venv/bin/python bench/guard_write_cost.py [--n 20000] [--rounds 31]

A Unix socket pair carries the plain writes (nothing leaves the machine); the TLS object
writes through memory BIOs to an in-memory peer, after a handshake with a certificate
made by ``openssl`` (skipped when there is none).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import socket
import ssl
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from scenarist.tracing.http._network_guard import NetworkGuard, guard_network

PLAIN = b"\x00\x01" * 32
REQUEST = b"POST /v1/search HTTP/1.1\r\nHost: 127.0.0.1:9\r\ncontent-length: 0\r\n\r\n"


def timed(call: Callable[[], None], n: int) -> float:
    """CPU ns a call over ``n`` calls (this thread's CPU time: the time other processes
    of a busy machine take the core from it is not counted)."""
    start = time.thread_time_ns()
    for _ in range(n):
        call()
    return (time.thread_time_ns() - start) / n


def cost(call: Callable[[], None], n: int, rounds: int) -> tuple[float, float]:
    """(ns a call with no guard, ns added by an active guard): the best unguarded time
    and the median of the per-round differences, rounds alternating unguarded and
    guarded so that a busy machine's noise falls on both."""
    off, added = [], []
    for _ in range(rounds):
        before = timed(call, n)
        with guard_network(NetworkGuard(None, "bench", ["127.0.0.1"])):
            during = timed(call, n)
        after = timed(call, n)
        off += [before, after]
        added.append(during - (before + after) / 2)
    return min(off), statistics.median(added)


def tls_pair() -> tuple[ssl.SSLObject, ssl.SSLObject, ssl.MemoryBIO, ssl.MemoryBIO] | None:
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    folder = Path(tempfile.mkdtemp(prefix="scenarist-bench-tls-"))
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *(openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext"),
            *("subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client = client_ctx.wrap_bio(c_in, c_out, server_hostname="localhost")
    server = server_ctx.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):  # pump the handshake between the two memory BIOs
        for side in (client, server):
            with contextlib.suppress(ssl.SSLWantReadError):
                side.do_handshake()
        s_in.write(c_out.read())
        c_in.write(s_out.read())
    return client, server, c_out, s_in


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=31)
    args = parser.parse_args()
    left, right = socket.socketpair()
    left.setblocking(False)

    def send(data: bytes | bytearray) -> Callable[[], None]:
        def call() -> None:
            left.send(data)
            right.recv(4096)

        return call

    cases: dict[str, Callable[[], None]] = {
        "socket.send, 64 bytes": send(PLAIN),
        "socket.send, a 64-byte bytearray": send(bytearray(PLAIN)),
        "socket.send, a non-LLM request": send(REQUEST),
    }
    pair = tls_pair()
    if pair is not None:
        client, _, c_out, _ = pair

        def tls_write() -> None:
            client.write(PLAIN)
            c_out.read()

        cases["ssl.SSLObject.write, 64 bytes"] = tls_write
    print(f"{'write':36} {'no guard':>10} {'added':>8}")
    for name, call in cases.items():
        off, added = cost(call, args.n, args.rounds)
        print(f"{name:36} {off:8.0f}ns {added:+6.0f}ns")


if __name__ == "__main__":
    main()
