"""A self-signed certificate made for a test (the ``openssl`` command line; nothing is
downloaded), naming provider hosts so a loopback server can answer for them by TLS."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["Certificate", "self_signed"]


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client_context(self) -> ssl.SSLContext:
        """Trusts this certificate only, and checks the host name against it."""
        return ssl.create_default_context(cafile=str(self.cert))


def self_signed(folder: Path, names: Sequence[str]) -> Certificate:
    """A certificate for ``names`` (DNS names; ``127.0.0.1`` is added), its own CA."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate")
    cert, key = folder / "cert.pem", folder / "key.pem"
    alt = ",".join([*(f"DNS:{name}" for name in names), "IP:127.0.0.1"])
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=scenarist-test",
            "-addext",
            f"subjectAltName={alt}",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return Certificate(cert, key)
