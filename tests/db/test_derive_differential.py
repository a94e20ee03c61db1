"""derive-outcomes in SQL and core's reference in Python agree on every write and every run (DESIGN.md, "The
data path"): the SQL is compiled from core's decision tables, and these tests hold the two together on all
three dialects, on a generated installation and on hypothesis-built edge cases."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, delete, select

from adapters import schema
from adapters.database import make_engine, parse_url
from adapters.outcomes import decided_by_of
from core.outcomes import Action, CallOutcome
from core.time import DAY_S
from data.builder import Installation
from data.generate import default_manifest, generate
from data.records import Record
from jobs.derive import derive_outcomes
from jobs.schema_setup import init_installation
from tests.db.conftest import ForcedPath
from tests.db.derive_reference import reference, stored

DAY = DAY_S
WINDOW = 7 * DAY
T = 1_790_000_000
NOW = T + 30 * DAY


def _agree(engine: Engine, *, now: int, window_s: int) -> None:
    expected_writes, expected_runs = reference(engine, now=now, window_s=window_s)
    derive_outcomes(engine, now=now, window_s=window_s, batch_size=50)
    writes, runs = stored(engine)
    assert runs == expected_runs
    different = {
        uid: (writes.get(uid), judged) for uid, judged in expected_writes.items() if writes.get(uid) != judged
    }
    assert not different, different
    assert writes.keys() == expected_writes.keys()


def test_the_sql_path_and_core_agree_on_every_write_of_a_generated_installation(empty_db_url: str) -> None:
    now = datetime(2026, 11, 29, tzinfo=UTC)
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=150,
        seed=11,
        now=now,
        manifest=default_manifest(parse_url(empty_db_url)),
    )
    engine = make_engine(empty_db_url)
    try:
        _agree(engine, now=int(now.timestamp()), window_s=WINDOW)
    finally:
        engine.dispose()


# --- hypothesis-built edge cases ----------------------------------------------------------------------------

# Offsets from the write, in seconds: the same save, its 2-second tolerance, the window's end and past it.
_EDGES = (-3, -2, -1, 0, 1, 2, 3, DAY, WINDOW - 1, WINDOW, WINDOW + 1, WINDOW + DAY)
_ACTIONS = tuple(int(action) for action in Action) + (9,)  # 9: a code no TYPO3 action has
# "Title" beside "title": two fields, on MariaDB too, whose default collation would find them equal.
_FIELDS = ("title", "Title", "hidden", "tstamp", "description", "l10n_diffsource")

row_strategy = st.tuples(
    st.sampled_from(_EDGES),
    st.sampled_from(_ACTIONS),
    st.sets(st.sampled_from(_FIELDS), max_size=3),
    st.integers(0, 9),  # 0: history_data not JSON
)
story_strategy = st.fixed_dictionaries(
    {
        "rows": st.lists(row_strategy, max_size=5),
        "own_row": st.sampled_from(("modify", "none", "late", "unreadable")),
        "end": st.sampled_from(("present", "deleted", "hard", "present")),
        "second_ai_write": st.sampled_from((None, 1, DAY, WINDOW)),
        "target": st.sampled_from(
            ("page", "page", "page", "missing_table", "no_uid_table", "not_json", "bad_uid")
        ),
    }
)


def _plant(site: Installation, index: int, story: dict[str, Any]) -> None:
    at = T + index * 60
    page = site.page(f"Seite {index}", at=T - 60 * DAY)
    target: Record = page
    raw: Any = None
    if story["target"] == "missing_table":
        target = site.missing_table_record("tx_gone_table", index + 1)
    elif story["target"] == "no_uid_table":
        raw = {"writeTargetTable": "tx_runrecord_scan_mark", "writeTargetUid": 3}
    elif story["target"] == "not_json":
        raw = "{not json"
    elif story["target"] == "bad_uid":
        raw = {"writeTargetTable": "pages", "writeTargetUid": "12"}
    chat = site.conversation(configuration="content-assistant", at=at - 120)
    chat.user("Bitte.", at=at - 120)
    run = chat.run()
    run.clock = float(at)
    own = story["own_row"]
    run.write(
        target,
        ("title",),
        history=own != "none",
        history_delay=3 if own == "late" else 0,
        raw_target=raw,
    )
    run.answer("Gespeichert.")
    run.finish()
    chat.close()
    if story["second_ai_write"] is not None and raw is None and not target.gone:
        second = site.conversation(configuration="content-assistant", at=at)
        second.user("Noch einmal.", at=at)
        again = second.run()
        again.clock = float(at + story["second_ai_write"])
        again.write(target, ("description",))
        again.finish()
        second.close()
    if target.gone:
        return
    for offset, action, fields, readable in story["rows"]:
        data = None if readable else "{nope"
        values = dict.fromkeys(sorted(fields), 1)
        site.history(
            target,
            action,
            at=at + offset,
            new=values,
            old=values,
            raw_data=data,
        )
    if story["end"] == "deleted":
        site.delete(target, at=at + DAY)
    elif story["end"] == "hard":
        site.delete(target, at=at + WINDOW + DAY, hard=True)


def _clear(connection: Connection) -> None:
    for table in (
        schema.write_outcome,
        schema.run_outcome,
        schema.call_outcome,
        schema.write_target,
        schema.pending_run,
        schema.unfinished_run,
        schema.scan_mark,
    ):
        connection.execute(delete(table))


def _agrees_on(engine: Engine, stories: list[dict[str, Any]]) -> None:
    with engine.begin() as connection:
        _clear(connection)
        site = Installation(connection)
        for index, story in enumerate(stories):
            _plant(site, index, story)
        site.finish()
    _agree(engine, now=NOW, window_s=WINDOW)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stories=st.lists(story_strategy, min_size=1, max_size=12))
def test_the_sql_path_and_core_agree_on_edge_cases(
    installation_engine: Engine, stories: list[dict[str, Any]]
) -> None:
    _agrees_on(installation_engine, stories)


def test_the_sql_path_and_core_agree_on_edge_cases_on_the_ways_only_a_larger_batch_takes(
    installation_engine: Engine, forced_path: ForcedPath
) -> None:
    @settings(max_examples=forced_path.examples, deadline=None)
    @given(stories=st.lists(story_strategy, min_size=1, max_size=12))
    def agrees(stories: list[dict[str, Any]]) -> None:
        _agrees_on(installation_engine, stories)

    agrees()
    assert forced_path.batches > 0, "no batch took the forced way"


def test_a_table_name_that_differs_only_in_case_names_another_table(installation_engine: Engine) -> None:
    """DESIGN.md rule 6: a target names its table byte for byte. MariaDB's collation makes "Pages" equal
    "pages", yet the rows of pages never decide a write to Pages, and one batch derives writes to both."""
    with installation_engine.begin() as connection:
        _clear(connection)
        site = Installation(connection)
        page = site.page("Seite", at=T - 60 * DAY)
        for index, target in enumerate((page, site.missing_table_record("Pages", page.uid))):
            chat = site.conversation(configuration="content-assistant", at=T + index - 120)
            chat.user("Bitte.", at=T + index - 120)
            run = chat.run()
            run.clock = float(T + index)
            run.write(target, ("title",))
            run.answer("Gespeichert.")
            run.finish()
            chat.close()
        site.history(page, Action.MODIFY, at=T + DAY, new={"title": 1}, old={"title": 0})
        site.delete(page, at=T + 2 * DAY)
        site.finish()
    _agree(installation_engine, now=NOW, window_s=WINDOW)
    h, w = schema.sys_history.c, schema.write_outcome.c
    with installation_engine.connect() as connection:
        rows = connection.execute(select(h.uid, h.tablename))
        page_rows = {int(uid) for uid, name in rows if name == "pages"}
        decided = {
            name: set(decided_by_of(by) or ())
            for name, by in connection.execute(select(w.tablename, w.decided_by))
        }
    assert decided.keys() == {"pages", "Pages"}
    assert decided["pages"] and decided["pages"] <= page_rows
    assert not decided["Pages"] & page_rows


def test_a_history_row_of_a_table_named_alike_but_for_an_accent_is_not_the_records(
    installation_engine: Engine,
) -> None:
    """DESIGN.md rule 6: a record is its table's byte for byte. MariaDB's collations take "pagés" for "pages"
    (and its batch tables keep the record's name in ASCII, adapters.own_rows_scratch), yet a human modify of
    pagés with the page's uid never makes the write to the page EDITED, nor is it its evidence."""
    with installation_engine.begin() as connection:
        _clear(connection)
        site = Installation(connection)
        page = site.page("Seite", at=T - 60 * DAY)
        chat = site.conversation(configuration="content-assistant", at=T - 120)
        chat.user("Bitte.", at=T - 120)
        run = chat.run()
        run.clock = float(T)
        run.write(page, ("title",))
        run.answer("Gespeichert.")
        run.finish()
        chat.close()
        alike = site.missing_table_record("pagés", page.uid)
        site.history(
            alike, Action.MODIFY, at=T + DAY, new={"title": "von Hand"}, old={"title": "Seite"}, by=2
        )
        site.finish()
    _agree(installation_engine, now=NOW, window_s=WINDOW)
    h, w = schema.sys_history.c, schema.write_outcome.c
    with installation_engine.connect() as connection:
        alike_rows = {
            int(uid) for uid, name in connection.execute(select(h.uid, h.tablename)) if name != "pages"
        }
        (outcome, decided), *others = connection.execute(select(w.outcome, w.decided_by)).all()
    assert others == [] and len(alike_rows) == 1
    assert outcome == CallOutcome.ACCEPTED_UNCHANGED.value
    assert not set(decided_by_of(decided) or ()) & alike_rows


def test_a_write_target_uid_above_a_signed_int_is_unreadable_in_sql_and_in_core(
    installation_engine: Engine,
) -> None:
    """DESIGN.md rule 6 and DOMAIN.md: sys_history.recuid is a signed int(11); a write naming a larger uid
    has no history row to match, and both interpreters call its target unreadable."""
    with installation_engine.begin() as connection:
        _clear(connection)
        site = Installation(connection)
        page = site.page("Seite", at=T - 60 * DAY)
        for index, uid in enumerate((2_147_483_647, 2_147_483_648, 9_007_199_254_740_993)):
            chat = site.conversation(configuration="content-assistant", at=T + index - 120)
            chat.user("Bitte.", at=T + index - 120)
            run = chat.run()
            run.clock = float(T + index)
            run.write(page, ("title",), raw_target={"writeTargetTable": "pages", "writeTargetUid": uid})
            run.answer("Gespeichert.")
            run.finish()
            chat.close()
        site.finish()
    _agree(installation_engine, now=NOW, window_s=WINDOW)
    w = schema.write_outcome.c
    with installation_engine.connect() as connection:
        reasons = sorted(str(reason) for (reason,) in connection.execute(select(w.reason)))
    assert reasons.count("unreadable_target") == 2
