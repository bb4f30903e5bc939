"""`pgq-top exporter --tls-cert/--tls-key [--tls-client-ca]`: /metrics over HTTPS, and with a client CA
only for clients holding a certificate it signed (mutual TLS: the endpoint's authentication).

prometheus_client's own TLS (start_http_server(certfile=...)) does the TLS handshake inside accept(),
in the one thread that accepts every connection: a single client that connects and sends nothing
stalls every scrape (measured: an idle TCP connection made the next scrape time out). Here the socket
is wrapped with do_handshake_on_connect=False, so each connection's handshake runs in its own
request thread, bounded by HANDSHAKE_TIMEOUT_S; the rest is prometheus_client's (its WSGI app and
threading server) and the standard library's ssl.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import threading
from dataclasses import dataclass
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from pgq_tui.errors import EXIT_USAGE, PgqError

HANDSHAKE_TIMEOUT_S = 10.0  # a connection that has not finished its request by then is dropped


@dataclass(frozen=True)
class Tls:
    cert: str
    key: str
    client_ca: str | None = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tls-cert", metavar="FILE", default=None, help="serve HTTPS with this certificate (PEM)")
    p.add_argument("--tls-key", metavar="FILE", default=None, help="the certificate's private key (PEM)")
    p.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        default=None,
        help="require clients to present a certificate signed by this CA (PEM): mutual TLS",
    )


def from_args(args: argparse.Namespace) -> Tls | None:
    """The TLS the flags ask for, None for plain HTTP; a wrong combination is one usage line."""
    cert, key, ca = args.tls_cert, args.tls_key, args.tls_client_ca
    if cert is None and key is None:
        if ca is not None:
            raise PgqError("--tls-client-ca needs --tls-cert and --tls-key", EXIT_USAGE)
        return None
    if cert is None or key is None:
        raise PgqError("--tls-cert and --tls-key go together", EXIT_USAGE)
    for flag, path in (("--tls-cert", cert), ("--tls-key", key), ("--tls-client-ca", ca)):
        if path is not None and not os.access(path, os.R_OK):
            raise PgqError(f"{flag} {path}: cannot read it", EXIT_USAGE)
    tls = Tls(cert, key, ca)
    context(tls)  # a file that is not a certificate, a key that does not match it: said now, in one line
    return tls


def context(tls: Tls) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        ctx.load_cert_chain(tls.cert, tls.key)
        if tls.client_ca is not None:
            ctx.load_verify_locations(tls.client_ca)
            ctx.verify_mode = ssl.CERT_REQUIRED
    except (ssl.SSLError, OSError) as exc:
        raise PgqError(f"cannot load the TLS certificate, key or client CA: {exc}", EXIT_USAGE) from None
    return ctx


class _Handler(WSGIRequestHandler):
    timeout = HANDSHAKE_TIMEOUT_S  # StreamRequestHandler sets it on the connection: bounds the handshake

    def log_message(self, format: str, *args: object) -> None:
        """Log nothing (as prometheus_client's handler)."""


def serve_tls(
    host: str, port: int, registry: CollectorRegistry, tls: Tls
) -> tuple[WSGIServer, threading.Thread]:
    ctx = context(tls)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET

    class Server(ThreadingWSGIServer):
        address_family = family

        def handle_error(self, request: object, client_address: object) -> None:
            """A client that fails the handshake (no certificate, a wrong one, plain HTTP) or times out
            is dropped without a traceback on stderr; the next scrape is served as usual."""

    httpd = make_server(host, port, make_wsgi_app(registry), Server, handler_class=_Handler)
    httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return httpd, thread
