"""`runrecord dashboard` served on a free port of localhost until a block ends, with the one-time
administrator password it printed: the browser tests' server and the browser benchmark's."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from adapters import settings

SERVE_TIMEOUT_S = 90
PASSWORD_LINE = re.compile(r"^administrator password: (\S+)$")


class NotServingError(Exception):
    """The dashboard ended, or did not answer in time."""


@dataclass(frozen=True)
class Server:
    base: str  # http://127.0.0.1:PORT
    password: str
    output: list[str]  # what it printed, as it prints it


@contextmanager
def dashboard_server(url: str, work: Path, now: datetime) -> Iterator[Server]:
    """`runrecord dashboard --port N` on the installation at `url`, its clock at `now`, in `work` (its home;
    no secrets.toml there: the password sign-in), until the block ends."""
    port = _free_port()
    environment = {key: value for key, value in os.environ.items() if not key.startswith("RUNRECORD_")}
    environment |= {"RUNRECORD_DB": url, settings.variable("now"): now.isoformat(), "HOME": str(work)}
    server = subprocess.Popen(
        [*_runrecord(), "dashboard", "--port", str(port)],
        cwd=work,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []
    password = ""
    assert server.stdout is not None
    for line in server.stdout:
        output.append(line.rstrip("\n"))
        found = PASSWORD_LINE.match(output[-1])
        if found:
            password = found.group(1)
            break
    drain = threading.Thread(target=lambda: output.extend(line.rstrip("\n") for line in server.stdout or ()))
    drain.start()
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base, server)
        yield Server(base, password, output)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        drain.join(timeout=10)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _runrecord() -> list[str]:
    script = Path(sys.executable).parent / "runrecord"
    return [str(script)] if script.exists() else [sys.executable, "-m", "jobs.cli"]


def _wait_for(base: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise NotServingError(f"runrecord dashboard exited with {server.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as answer:
                if answer.read().decode() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise NotServingError(f"the dashboard did not answer on {base} within {SERVE_TIMEOUT_S} s")
