"""Local HTTP endpoints on 127.0.0.1 for the webhook tests: one that records what it is POSTed and answers
with the statuses it is given, and one that takes connections and never answers."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Receiver:
    """What the endpoint was sent: each POST's path, headers and JSON body, in order."""

    url: str
    statuses: list[int]  # the answer to each POST in turn; the last one repeats
    posts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def bodies(self) -> list[Any]:
        """The JSON documents received."""
        return [post["body"] for post in self.posts]


@contextmanager
def receiver(*statuses: int, path: str = "/hooks/runrecord?token=secret") -> Iterator[Receiver]:
    """An HTTP server on 127.0.0.1 (a free port) that answers each POST with the next status (200 when none
    is given) and records it."""
    state = Receiver(url="", statuses=list(statuses) or [200])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the name http.server calls)
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                state.posts.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": json.loads(body.decode("utf-8")),
                    }
                )
                status = state.statuses[min(len(state.posts), len(state.statuses)) - 1]
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextmanager
def silent_endpoint() -> Iterator[str]:
    """A URL on 127.0.0.1 whose port takes the connection (the kernel's backlog) and never answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hooks/runrecord"
    finally:
        listener.close()


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens: a connection is refused."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return f"http://127.0.0.1:{port}/hooks/runrecord"
