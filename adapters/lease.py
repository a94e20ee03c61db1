"""A named lease in tx_runrecord_lease: whoever holds it may run the jobs; the others wait.

One row per name (unique). Taking it is one conditional UPDATE — the row is ours when it has expired or is
ours already — checked by its row count, and an INSERT when there is no row yet, where the unique key lets
exactly one of two racing processes win. A taking the database chose as the victim of a deadlock (InnoDB picks
one among processes inserting one key) is tried again: by then the row is there, and the answer is the true
one. A lock wait that timed out is not: it has waited its time already, and the caller hears of it.
Renewing is taking again before the lease runs out; releasing lets the next one take over at once instead of
waiting for the expiry. The same statements work on SQLite, MariaDB and PostgreSQL: no upsert dialect, no
advisory lock.

Expiry times come from the taking process's clock, in epoch milliseconds. Schedulers on several hosts need
clocks that agree to well within a lease (NTP does); a lease is renewed every third of its length, so a
holder that stops renewing is taken over between one and two thirds of a lease after its last renewal.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine, case, insert, literal, or_, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from adapters.dialect.session import is_deadlock_victim
from adapters.schema import lease as lease_table

MAX_HOLDER_LENGTH = 128  # the holder column's length
TAKE_ATTEMPTS = 5  # tries of a taking chosen as a deadlock's victim


@dataclass(frozen=True)
class LeaseState:
    """Who holds a lease and until when (epoch milliseconds)."""

    holder: str
    expires_at_ms: int

    def expired(self, now_ms: int) -> bool:
        """A lease is free once its expiry is in the past."""
        return self.expires_at_ms < now_ms


def holder_id() -> str:
    """This process, recognisably: host, pid, and a random part (a pid is reused across restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"[:MAX_HOLDER_LENGTH]


class Lease:
    """The lease `name` as `holder` sees it; every method is one short transaction of its own."""

    def __init__(
        self,
        engine: Engine,
        name: str,
        *,
        seconds: float,
        holder: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if seconds <= 0:
            raise ValueError(f"a lease lasts a positive number of seconds, not {seconds}")
        self.engine = engine
        self.name = name
        self.seconds = seconds
        self.holder = (holder or holder_id())[:MAX_HOLDER_LENGTH]
        self.clock = clock

    def now_ms(self) -> int:
        """The clock, in epoch milliseconds."""
        return int(self.clock() * 1000)

    def take(self) -> bool:
        """Take the lease, or extend it when it is ours; False while another holder's has not expired."""
        for _ in range(TAKE_ATTEMPTS - 1):
            try:
                return self._take_once()
            except DBAPIError as error:
                if not is_deadlock_victim(error):
                    raise
        return self._take_once()

    def _take_once(self) -> bool:
        now = self.now_ms()
        until = now + int(self.seconds * 1000)
        statement = (
            update(lease_table)
            .where(
                lease_table.c.name == self.name,
                or_(lease_table.c.holder == self.holder, lease_table.c.expires_at_ms < now),
            )
            # acquired_at first: MariaDB assigns left to right, and this must read the holder before the
            # assignment below replaces it.
            .ordered_values(
                (
                    lease_table.c.acquired_at,
                    case(
                        (lease_table.c.holder == self.holder, lease_table.c.acquired_at),
                        else_=literal(now // 1000),
                    ),
                ),
                (lease_table.c.holder, self.holder),
                (lease_table.c.expires_at_ms, until),
            )
        )
        with self.engine.begin() as connection:
            if connection.execute(statement).rowcount == 1:
                return True
        try:
            with self.engine.begin() as connection:
                connection.execute(
                    insert(lease_table).values(
                        name=self.name, holder=self.holder, acquired_at=now // 1000, expires_at_ms=until
                    )
                )
        except IntegrityError:
            return False  # the row exists (or another process just made it), and it is not ours to take
        return True

    def renew(self) -> bool:
        """Extend our lease; False when it expired meanwhile and another holder has taken it."""
        return self.take()

    def release(self) -> None:
        """Let the lease go now, if it is ours, so that a waiting process need not wait for the expiry."""
        with self.engine.begin() as connection:
            connection.execute(
                update(lease_table)
                .where(lease_table.c.name == self.name, lease_table.c.holder == self.holder)
                .values(expires_at_ms=0)
            )

    def state(self) -> LeaseState | None:
        """The lease's row as it stands; None when nobody has taken it yet."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(lease_table.c.holder, lease_table.c.expires_at_ms).where(
                    lease_table.c.name == self.name
                )
            ).one_or_none()
        return None if row is None else LeaseState(row.holder, int(row.expires_at_ms))
