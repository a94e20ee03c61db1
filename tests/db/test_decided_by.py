"""A write's stored outcome names the sys_history rows that decided it: core.outcomes' decided_by, sorted, as
a JSON array in tx_runrecord_write_outcome.decided_by; NULL for a write derived before the column existed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from alembic import command
from sqlalchemy import Engine, column, insert, select, table

from adapters import schema
from adapters.database import make_engine
from adapters.outcomes import decided_by_text
from core.time import DAY_S
from data.agent_run import Run
from data.agent_run import Write as PlantedWrite
from data.builder import Installation
from data.records import Record
from jobs.derive import derive_outcomes
from jobs.schema_setup import alembic_config, init_db
from tests.db.derive_reference import reference

WINDOW = 7 * DAY_S
NOW = 1_790_000_000
T = NOW - 30 * DAY_S  # when the AI writes: its window closed long ago
CREATED = T - 30 * DAY_S


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def a_write(site: Installation, record: Record, *, at: int = T) -> tuple[Run, PlantedWrite]:
    chat = site.conversation(configuration="content-assistant", at=at - 120)
    chat.user("Bitte überarbeite die Seite.", at=at - 120)
    run = chat.run()
    run.propose("update_record", record, fields=("title",))
    written = run.approve(at=at)
    assert written is not None
    run.answer("Gespeichert.")
    run.finish()
    chat.close()
    return run, written


def stored_decided_by(engine: Engine, written: PlantedWrite) -> str | None:
    w = schema.write_outcome.c
    with engine.connect() as connection:
        value = connection.execute(select(w.decided_by).where(w.event_uid == written.event_uid)).scalar_one()
    return None if value is None else str(value)


def own_row(engine: Engine, written: PlantedWrite) -> int:
    """The uid of the write's own sys_history row (stamped within the same save)."""
    h = schema.sys_history.c
    with engine.connect() as connection:
        return int(
            connection.execute(
                select(h.uid).where(
                    h.tablename == written.record.table,
                    h.recuid == written.record.uid,
                    h.tstamp.between(written.written_at, written.written_at + 2),
                )
            ).scalar_one()
        )


def core_decided_by(engine: Engine, written: PlantedWrite) -> list[int]:
    """What core.outcomes says decided the write (the reference of derive-outcomes: every AI write of the
    record, its rows with their writers compared in SQL), from the rows as the database holds them."""
    writes, _ = reference(engine, now=NOW, window_s=WINDOW)
    return sorted(writes[written.event_uid].decided_by)


def test_an_accepted_write_is_decided_by_its_own_history_row(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        _, written = a_write(site, site.page("Produkte", at=CREATED))

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    assert stored_decided_by(installation_engine, written) == f"[{own_row(installation_engine, written)}]"


def test_an_edited_write_is_decided_by_its_own_row_and_the_human_edits_sorted(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        page = site.page("Produkte", at=CREATED)
        _, written = a_write(site, page)
        later = site.human_edit(page, {"title": "noch einmal"}, at=T + 2 * DAY_S)
        first = site.human_edit(page, {"title": "von Hand"}, at=T + DAY_S)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    own = own_row(installation_engine, written)
    assert stored_decided_by(installation_engine, written) == decided_by_text([own, first, later])


def test_a_discarded_write_is_decided_by_its_own_row_and_the_delete(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = site.page("Produkte", at=CREATED)
        _, written = a_write(site, page)
        deleted = site.delete(page, at=T + DAY_S)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    own = own_row(installation_engine, written)
    assert stored_decided_by(installation_engine, written) == decided_by_text([own, deleted])


def test_an_unknown_write_is_decided_by_no_row(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        page = site.page("Produkte", at=CREATED)
        _, written = a_write(site, page)
    with installation_engine.begin() as connection:
        h = schema.sys_history
        connection.execute(h.delete().where(h.c.recuid == page.uid))

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    assert stored_decided_by(installation_engine, written) == "[]"


def test_the_stored_uids_are_core_decided_by_for_every_write(installation_engine: Engine) -> None:
    with installation(installation_engine) as site:
        pages = [site.page(f"Seite {n}", at=CREATED) for n in range(4)]
        writes = [a_write(site, page, at=T + n * 3600)[1] for n, page in enumerate(pages)]
        writes.append(a_write(site, pages[0], at=T + DAY_S)[1])  # another AI write: not a human row
        site.human_edit(pages[0], {"title": "von Hand"}, at=T + 3 * DAY_S)
        site.set_hidden(pages[1], True, at=T + 2 * DAY_S)
        site.delete(pages[2], at=T + DAY_S)
        site.undelete(pages[2], at=T + 2 * DAY_S)
        site.move(pages[3], at=T + DAY_S)
        site.human_edit(pages[3], {"title": "zu spät"}, at=T + WINDOW + DAY_S)

    derive_outcomes(installation_engine, now=NOW, window_s=WINDOW)

    for written in writes:
        assert stored_decided_by(installation_engine, written) == decided_by_text(
            core_decided_by(installation_engine, written)
        ), written


def test_a_write_derived_before_the_column_existed_keeps_null(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    before_0006 = table(schema.write_outcome.name, column("run_uid"), column("event_uid"), column("outcome"))
    try:
        init_db(engine, with_upstream=True)
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0005")
            connection.execute(insert(before_0006).values(run_uid=1, event_uid=10, outcome="edited"))

        init_db(engine, with_upstream=True)

        with engine.connect() as connection:
            stored = connection.execute(select(schema.write_outcome.c.decided_by)).scalars().all()
    finally:
        engine.dispose()
    assert stored == [None]
