"""What the benchmarks share: a scratch database per engine, each phase in a fresh process (or, for a phase
that imitates the scheduler, in a process kept from an earlier phase), its memory."""

from __future__ import annotations

import multiprocessing
import resource
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import URL, make_url

SERVERS = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    "mariadb": "mysql+pymysql://root@127.0.0.1:3306/mysql",
}


def peak_mb() -> float:
    """This process's own peak resident memory.

    Not getrusage's ru_maxrss on Linux: it survives the exec of a spawned process, which would report the
    peak of the parent that built the rows. The high-water mark in /proc belongs to the process image alone.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_process(function: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
    """Run one phase in a fresh spawned process, so that its time and memory are its own."""
    with kept_process() as run:
        return run(function, *args)


@contextmanager
def kept_process() -> Iterator[Callable[..., dict[str, Any]]]:
    """One spawned process for several phases, run one after another: what a phase leaves in it (an engine
    and its compiled statements) the next one finds, as the scheduler's process keeps them between nights."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:

        def run(function: Callable[..., dict[str, Any]], *args: Any) -> dict[str, Any]:
            return pool.apply(function, args)

        yield run


def scratch_database(engine_name: str, directory: Path) -> tuple[URL, Callable[[], None]]:
    """A new empty database of the engine (SQLite: a file in directory) and the function that drops it."""
    if engine_name == "sqlite":
        path = directory / "bench.sqlite"
        return URL.create("sqlite", database=str(path)), lambda: path.unlink(missing_ok=True)
    server = make_url(SERVERS[engine_name])
    name = f"runrecord_bench_{secrets.token_hex(4)}"  # generated here, never from input
    admin: Engine = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))

    def drop() -> None:
        with admin.connect() as connection:
            if engine_name == "postgresql":
                connection.execute(
                    text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
                    {"name": name},
                )
            connection.execute(text(f"DROP DATABASE IF EXISTS {name}"))
        admin.dispose()

    return server.set(database=name), drop
