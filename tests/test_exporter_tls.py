"""`pgq-top exporter --tls-cert/--tls-key [--tls-client-ca]` (pgq_tui/exporter/tls.py): /metrics over
HTTPS from the real command, mutual TLS refusing a client without a certificate the CA signed, a
client that connects and says nothing not stalling the next scrape (prometheus_client's own TLS
does), and wrong TLS flags as one line. Certificates are made by openssl for each run."""

from __future__ import annotations

import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client import start_http_server as prometheus_start_http_server
from prometheus_client.parser import text_string_to_metric_families

from pgq_tui.cli import main
from pgq_tui.exporter.tls import Tls, serve_tls


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate signed by it, and another."""
    d = tmp_path_factory.mktemp("pki")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=test CA",
        cwd=d,
    )
    # a client certificate no CA of ours signed (self-signed)
    openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "other.key",
        "-out",
        "other.pem",
        "-days",
        "2",
        "-subj",
        "/CN=x",
        cwd=d,
    )
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    (d / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for name, cn in (("server", "127.0.0.1"), ("client", "prometheus")):
        openssl("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext", cwd=d)  # fmt: skip
    return d


def client_context(pki: Path, cert: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(pki / "ca.pem"))
    if cert:
        ctx.load_cert_chain(str(pki / "client.pem"), str(pki / "client.key"))
    return ctx


def get(url: str, ctx: ssl.SSLContext | None, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
        assert resp.status == 200
        return str(resp.read().decode())


def test_the_command_serves_https(dsn: str, pki: Path) -> None:
    cmd = [sys.executable, "-m", "pgq_tui", "exporter", "--dsn", dsn, "--listen", "127.0.0.1:0",
           "--tls-cert", str(pki / "server.pem"), "--tls-key", str(pki / "server.key")]  # fmt: skip
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"https://\S+/metrics", line)
        assert url, line
        body = get(url.group(0), client_context(pki))
        samples = {s.name: s.value for f in text_string_to_metric_families(body) for s in f.samples}
        assert samples["pgq_up"] == 1 and "pgq_jobs_completed_total" in samples
        with pytest.raises((urllib.error.URLError, ConnectionError)):  # plain HTTP gets no metrics
            get(url.group(0).replace("https://", "http://"), None)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def registry_with_one_metric() -> CollectorRegistry:
    from prometheus_client import Gauge

    registry = CollectorRegistry()
    Gauge("pgq_tls_probe", "a probe", registry=registry).set(1)
    return registry


def test_mutual_tls_refuses_a_client_without_a_signed_certificate(
    pki: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    tls = Tls(str(pki / "server.pem"), str(pki / "server.key"), str(pki / "ca.pem"))
    httpd, thread = serve_tls("127.0.0.1", 0, registry_with_one_metric(), tls)
    url = f"https://127.0.0.1:{httpd.server_address[1]}/metrics"
    try:
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, client_context(pki, cert=False))
        # a certificate the CA did not sign
        other = client_context(pki)
        other.load_cert_chain(str(pki / "other.pem"), str(pki / "other.key"))
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            get(url, other)
        assert "pgq_tls_probe 1.0" in get(url, client_context(pki, cert=True))
    finally:
        httpd.shutdown()
        thread.join(5)
    assert "Traceback" not in capfd.readouterr().err  # refused handshakes are dropped quietly


def stalled_then_scrape(url: str, port: int, ctx: ssl.SSLContext) -> float | None:
    """Seconds the scrape took while another client holds a connection open and silent; None if it
    timed out."""
    with socket.create_connection(("127.0.0.1", port)):
        time.sleep(0.2)
        started = time.monotonic()
        try:
            get(url, ctx, timeout=2.0)
        except (urllib.error.URLError, TimeoutError, ssl.SSLError):
            return None
        return time.monotonic() - started


def test_a_silent_client_does_not_stall_the_scrapes(pki: Path) -> None:
    tls = Tls(str(pki / "server.pem"), str(pki / "server.key"))
    httpd, thread = serve_tls("127.0.0.1", 0, registry_with_one_metric(), tls)
    try:
        port = httpd.server_address[1]
        took = stalled_then_scrape(f"https://127.0.0.1:{port}/metrics", port, client_context(pki))
        assert took is not None and took < 1.0
    finally:
        httpd.shutdown()
        thread.join(5)
    # why tls.py wraps the socket itself: prometheus_client's TLS handshakes inside accept()
    theirs, their_thread = prometheus_start_http_server(
        0, "127.0.0.1", registry_with_one_metric(), certfile=tls.cert, keyfile=tls.key
    )
    try:
        port = theirs.server_address[1]
        assert stalled_then_scrape(f"https://127.0.0.1:{port}/metrics", port, client_context(pki)) is None
    finally:
        theirs.shutdown()
        their_thread.join(5)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--tls-cert", "{pki}/server.pem"], "--tls-cert and --tls-key go together"),
        (["--tls-client-ca", "{pki}/ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
        (["--tls-cert", "{pki}/nope.pem", "--tls-key", "{pki}/server.key"], "nope.pem: cannot read it"),
        (
            ["--tls-cert", "{pki}/server.pem", "--tls-key", "{pki}/client.key"],
            "cannot load the TLS certificate",
        ),
        (
            ["--tls-cert", "{pki}/server.ext", "--tls-key", "{pki}/server.key"],
            "cannot load the TLS certificate",
        ),
    ],
)
def test_wrong_tls_flags_are_one_line(
    pki: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    argv = ["exporter", "--dsn", "host=/nonexistent dbname=x", *(f.format(pki=pki) for f in flags)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and message in err, err
