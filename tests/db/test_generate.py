"""The demo installation: written through the upstream tables, deterministic, and never left half-written."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, inspect, select

from adapters import schema
from adapters.database import RunrecordError, make_engine, parse_url, sqlite_path
from core.outcomes import Action
from core.time import DAY_S
from data import generate as generator
from data.generate import Progress, campaign_tours, default_manifest, generate
from data.own_transcript import ALT_TEXT_SKILL
from data.processes import ProcessingChoice
from data.story import (
    CAMPAIGN_REQUEST,
    CAMPAIGN_WEEK_WEIGHTS,
    CANARY_CONFIGURATION,
    CANARY_PROMOTED_SHARE,
    CANARY_SHARE,
    KEPT_RECORD_CASES,
    SEO_SKILL,
)
from jobs.demo import ensure_demo_database
from jobs.schema_setup import init_installation

NOW = datetime(2026, 11, 29, tzinfo=UTC)
DAY = DAY_S


def _generate(url: str, conversations: int = 40) -> Engine:
    generate(
        url,
        create_tables=init_installation,
        conversations=conversations,
        seed=7,
        now=NOW,
        manifest=default_manifest(parse_url(url)),
    )
    return make_engine(url)


def _json(text: str | None) -> Any:
    try:
        return json.loads(text or "null")
    except json.JSONDecodeError:
        return None


def test_conversation_1_reads_back_as_six_approved_cards_on_one_page_and_the_question_three_days_later(
    empty_db_url: str,
) -> None:
    engine = _generate(empty_db_url)

    with engine.connect() as connection:
        chat = connection.execute(
            select(schema.conversation.c.card_outcomes).where(schema.conversation.c.uid == 1)
        ).one()
        cards = json.loads(chat.card_outcomes)
        run_uid = connection.execute(
            select(schema.agentrun.c.uid).where(schema.agentrun.c.uuid == cards[0]["runUuid"])
        ).scalar_one()
        writes = connection.execute(
            select(schema.agentrun_event.c.payload, schema.agentrun_event.c.crdate)
            .where(schema.agentrun_event.c.run == run_uid, schema.agentrun_event.c.kind == "tool_write")
            .order_by(schema.agentrun_event.c.sequence)
        ).all()
        targets = {
            (json.loads(w.payload)["writeTargetTable"], json.loads(w.payload)["writeTargetUid"])
            for w in writes
        }
        (table, uid) = next(iter(targets))
        history = connection.execute(
            select(schema.sys_history.c.tstamp, schema.sys_history.c.history_data)
            .where(
                schema.sys_history.c.tablename == table,
                schema.sys_history.c.recuid == uid,
                schema.sys_history.c.actiontype == Action.MODIFY,
            )
            .order_by(schema.sys_history.c.uid)
        ).all()
        messages = [
            json.loads(payload)
            for payload in connection.execute(
                select(schema.message.c.payload)
                .where(schema.message.c.conversation == 1)
                .order_by(schema.message.c.sorting)
            ).scalars()
        ]
    engine.dispose()

    assert [(c["decision"], c["answer"]) for c in cards] == [("approved", "Übernehmen")] * 6
    assert len(writes) == 6 and len(targets) == 1 and table == "pages"
    assert [c["record"] for c in cards] == [f"pages:{uid}"] * 6
    # Inserted in the order of the writes, each stamped when its process started: at or before the write.
    assert len(history) == 6 and all(h.tstamp <= w.crdate for h, w in zip(history, writes, strict=True))
    written_fields = [next(iter(json.loads(h.history_data)["newRecord"])) for h in history]
    assert written_fields == [field for card in cards for field in card["fields"]]
    question = next(i for i, m in enumerate(messages) if m["content"] == "was ist hier passiert?")
    tour_end = datetime.fromisoformat(messages[question - 1]["createdAt"])
    asked = datetime.fromisoformat(messages[question]["createdAt"])
    assert (asked - tour_end).days == 3
    assert "nicht stattgefunden" in messages[question + 1]["content"]


def test_the_same_seed_writes_the_same_installation(tmp_path: Path) -> None:
    first, second = (f"sqlite:///{tmp_path / name}" for name in ("a.sqlite", "b.sqlite"))

    engines = [_generate(first, 60), _generate(second, 60)]

    dumps = []
    for engine in engines:
        with engine.connect() as connection:
            dumps.append(
                {
                    table.name: connection.execute(select(table).order_by(table.c.uid)).all()
                    for table in schema.upstream.sorted_tables
                }
            )
        engine.dispose()
    assert dumps[0] == dumps[1]
    assert (tmp_path / "a.manifest.runs.jsonl").read_text() == (
        tmp_path / "b.manifest.runs.jsonl"
    ).read_text()


@pytest.mark.parametrize(
    "now",
    [
        datetime(2026, 11, 30, 0, 30, tzinfo=UTC),  # the last week's fates are all ahead of it
        datetime(2026, 12, 2, 14, tzinfo=UTC),
        datetime(2026, 12, 6, 23, 30, tzinfo=UTC),
    ],
    ids=["monday", "wednesday", "sunday"],
)
def test_no_row_of_a_generated_installation_lies_after_its_now_whatever_the_hour_of_the_week(
    tmp_path: Path, now: datetime
) -> None:
    # An editor's act planned after `now` (an edit after a window, an act in a window still open) has not
    # happened: no sys_history row, and the record as it was.
    url = f"sqlite:///{tmp_path / 'installation.sqlite'}"
    generate(url, create_tables=init_installation, conversations=60, seed=7, now=now)
    engine = make_engine(url)

    end = int(now.timestamp())
    with engine.connect() as connection:
        stamped = {
            "sys_history": connection.execute(
                select(func.count()).where(schema.sys_history.c.tstamp > end)
            ).scalar_one(),
            "agentrun_event": connection.execute(
                select(func.count()).where(schema.agentrun_event.c.crdate > end)
            ).scalar_one(),
            "message": connection.execute(
                select(func.count()).where(schema.message.c.crdate > end)
            ).scalar_one(),
        }
    engine.dispose()
    assert stamped == {"sys_history": 0, "agentrun_event": 0, "message": 0}


def test_a_failed_generate_leaves_nothing_behind(empty_db_url: str) -> None:
    def fail(progress: Progress) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        generate(
            empty_db_url, create_tables=init_installation, conversations=2_000, seed=1, now=NOW, progress=fail
        )

    url = parse_url(empty_db_url)
    path = sqlite_path(url)
    if path is not None:
        assert not path.exists() or path.stat().st_size == 0
        assert [p.name for p in path.parent.iterdir() if "partial" in p.name] == []
    else:
        engine = make_engine(url)
        with engine.connect() as connection:
            assert inspect(connection).get_table_names() == []
        engine.dispose()


def test_generate_refuses_a_database_that_is_not_empty(empty_db_url: str) -> None:
    _generate(empty_db_url, 5).dispose()

    with pytest.raises(RunrecordError, match="not empty"):
        generate(empty_db_url, create_tables=init_installation, conversations=5, seed=1, now=NOW)


def test_the_manifest_accounts_for_every_run_with_a_write(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    _generate(url, 300).dispose()

    manifest = json.loads((tmp_path / "demo.manifest.json").read_text())
    runs = [json.loads(line) for line in (tmp_path / manifest["runs_file"]).read_text().splitlines()]
    summary = manifest["summary"]
    with_writes = [run for run in runs if run["writes"]]
    assert sum(summary["runs_by_outcome"].values()) + summary["runs_inside_window"] == len(with_writes)
    assert len(runs) == summary["runs"]
    assert {run["outcome"] for run in with_writes} <= {"accepted_unchanged", "edited", "discarded", "unknown"}
    assert manifest["release"]["date"] < NOW.date().isoformat()


def _requests(url: str) -> list[tuple[int, int, int, str]]:
    """Every conversation's uid, start, editor and first message, in uid order."""
    engine = make_engine(url)
    chat, message = schema.conversation.c, schema.message.c
    query = (
        select(chat.uid, chat.crdate, chat.be_user, message.payload)
        .join(schema.message, (message.conversation == chat.uid) & (message.sorting == 0))
        .order_by(chat.uid)
    )
    with engine.connect() as connection:
        rows = [
            (r.uid, r.crdate, r.be_user, json.loads(r.payload)["content"]) for r in connection.execute(query)
        ]
    engine.dispose()
    return rows


def test_the_campaign_changes_nothing_the_conversations_asked_for_draw_and_uids_follow_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_campaign, without = (f"sqlite:///{tmp_path / name}" for name in ("with.sqlite", "without.sqlite"))
    everyday = 120
    count = campaign_tours(everyday)
    _generate(with_campaign, everyday).dispose()
    monkeypatch.setattr(generator, "CAMPAIGN_TOURS_PER_CONVERSATION", 0)
    _generate(without, everyday).dispose()

    campaign, plain = _requests(with_campaign), _requests(without)

    tours = [row for row in campaign if row[3] == CAMPAIGN_REQUEST]
    asked_for = [row[1:] for row in campaign if row[3] != CAMPAIGN_REQUEST]
    assert len(tours) == count and len(plain) == everyday
    assert asked_for == [row[1:] for row in plain]  # the same times, editors and requests
    # Between conversation 2 and the last one (the three stories told at fixed dates) uids follow time.
    starts = [row[1] for row in campaign[2:-1]]
    assert starts == sorted(starts)


def test_the_campaign_plants_its_tours_week_by_week_with_the_canary_taking_its_share_of_each(
    tmp_path: Path,
) -> None:
    everyday = 300
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    _generate(url, everyday).dispose()

    manifest = json.loads((tmp_path / "demo.manifest.json").read_text())
    runs = [json.loads(line) for line in (tmp_path / manifest["runs_file"]).read_text().splitlines()]
    requests = _requests(url)
    tours = {uid for uid, _, _, request in requests if request == CAMPAIGN_REQUEST}
    weeks = [datetime.fromisoformat(week).replace(tzinfo=UTC) for week in manifest["campaign"]["weeks"]]
    campaign = [run for run in runs if run["conversation"] in tours]
    by_week: list[list[dict[str, Any]]] = [[] for _ in weeks]
    for run in campaign:
        week = max(i for i, start in enumerate(weeks) if run["last_write_at"] >= start.timestamp())
        by_week[week].append(run)
    count = campaign_tours(everyday)
    assert manifest["campaign"]["tours"] == count == len(tours) == len(campaign)
    assert manifest["summary"]["campaign_tours"] == count
    assert manifest["summary"]["conversations"] == everyday + count
    assert requests[-1][0] == everyday + count
    assert next(run["skill"] for run in runs if run["conversation"] == requests[-1][0]) == ALT_TEXT_SKILL
    assert {run["skill"] for run in campaign} == {SEO_SKILL}
    assert all(run["writes"] for run in campaign)
    assert all(run["last_write_at"] < (weeks[-1] + timedelta(weeks=1)).timestamp() for run in campaign)
    weights = sum(CAMPAIGN_WEEK_WEIGHTS)
    assert [len(week) for week in by_week] == pytest.approx(
        [count * weight / weights for weight in CAMPAIGN_WEEK_WEIGHTS], abs=2
    )
    shares = [sum(r["configuration"] == CANARY_CONFIGURATION for r in week) / len(week) for week in by_week]
    assert manifest["canary"]["promoted"] == manifest["campaign"]["weeks"][-1]
    assert shares == pytest.approx([CANARY_SHARE] * 3 + [CANARY_PROMOTED_SHARE], abs=0.03)


def test_the_demo_plants_every_kind_of_row_the_rules_are_about(tmp_path: Path, run_cli: Callable) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    engine = _generate(url, 600)
    manifest = json.loads((tmp_path / "demo.manifest.json").read_text())
    horizon = manifest["history_horizon"]

    with engine.connect() as connection:
        events = connection.execute(
            select(schema.agentrun_event.c.kind, schema.agentrun_event.c.payload)
        ).all()
        messages = [json.loads(p) for p in connection.execute(select(schema.message.c.payload)).scalars()]
        chats = connection.execute(
            select(
                schema.conversation.c.status,
                schema.conversation.c.error_code,
                schema.conversation.c.card_outcomes,
            )
        ).all()
        configurations = connection.execute(
            select(func.count()).select_from(schema.nrllm_configuration)
        ).scalar()
        oldest = connection.execute(select(func.min(schema.sys_history.c.tstamp))).scalar()
        actions = set(connection.execute(select(schema.sys_history.c.actiontype).distinct()).scalars())
    engine.dispose()

    payloads = [_json(p) for k, p in events if k in ("tool", "tool_write") and _json(p) is not None]
    refused = [p for p in payloads if p["kind"] == "tool" and p["durationMs"] == 0.0 and p["toolIsError"]]
    completeness = {p.get("writeCompleteness", "unconfirmed") for p in payloads if p["kind"] == "tool_write"}
    answers = {card["answer"] for chat in chats for card in (_json(chat.card_outcomes) or [])}
    assert refused, "refused calls recorded with exactly 0.0 ms"
    assert {"complete", "partial", "unconfirmed"} <= completeness
    assert {"Übernehmen", "Behalten", "Überspringen", "Andere Variante"} <= answers
    assert any(p["toolName"] == "ask_choice" for p in payloads)
    assert {"nothingSaved", "runFinishedOutside"} <= {m.get("notice") for m in messages}
    assert {"weiter", "alles approved", "habe alles freigegeben"} & {m["content"] for m in messages}
    assert {"processing", "locked"} & {chat.status for chat in chats}
    assert "providerNotConfigured" in {chat.error_code for chat in chats}
    assert configurations == 3  # the stable SEO configuration, its canary and the content one
    assert oldest >= horizon
    assert {1, 2, 3, 4, 5} <= actions
    assert default_manifest(parse_url(url)) == tmp_path / "demo.manifest.json"


def test_the_demo_stamps_its_history_both_ways_and_plants_every_case_of_the_stamping_rules(
    tmp_path: Path,
) -> None:
    url = parse_url(f"sqlite:///{tmp_path / 'demo.sqlite'}")
    ensure_demo_database(url, now=NOW)
    summary = json.loads((tmp_path / "demo.manifest.json").read_text())["summary"]

    strategies = summary["writes_by_processing"]
    assert set(strategies) == {ProcessingChoice.EXEC.value, ProcessingChoice.WORKER.value}
    assert min(strategies.values()) > sum(strategies.values()) // 3
    assert summary["worker_writes_with_a_restart_in_their_window"] > 0
    cases = {case for case, _ in KEPT_RECORD_CASES} | {
        "write_in_a_later_round",
        "second_run_rewrite",
        "hand_edit_between_writes",
        "run_named_by_correlation_id",
    }
    assert {case for case, count in summary["planted_cases"].items() if count > 0} >= cases


def test_every_draft_of_the_demo_begins_with_its_copy_of_the_record_as_typo3_records_a_first_workspace_edit(
    tmp_path: Path,
) -> None:
    url = parse_url(f"sqlite:///{tmp_path / 'demo.sqlite'}")
    ensure_demo_database(url, now=NOW)
    h = schema.sys_history.c
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(
                select(h.tablename, h.recuid, h.actiontype, h.history_data)
                .where(h.workspace > 0)
                .order_by(h.uid)
            ).all()
    finally:
        engine.dispose()

    drafts = [(row.tablename, row.recuid, row.actiontype) for row in rows]
    modifies = [i for i, (*_, action) in enumerate(drafts) if action == Action.MODIFY]
    assert modifies
    for i in modifies:  # the copy, an add row of every field, comes right before the edit
        assert i > 0 and drafts[i - 1] == (*drafts[i][:2], Action.ADD)
        edited = json.loads(rows[i].history_data)["newRecord"]
        assert set(edited) < set(json.loads(rows[i - 1].history_data))


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("postgresql+psycopg://postgres@127.0.0.1:1/test", "failed"),
        ("mysql+pymysql://root@127.0.0.1:1/test", "failed"),
        ("sqlite:///{tmp}/a-file/demo.sqlite", "is not a directory"),
        ("sqlite:///{tmp}/notes.sqlite", "not empty"),
    ],
    ids=[
        "unreachable-postgresql",
        "unreachable-mariadb",
        "read-only-location",
        "file-that-is-not-a-database",
    ],
)
def test_generate_on_bad_targets_fails_in_one_line_and_leaves_nothing(
    target: str, expected: str, tmp_path: Path, run_cli: Callable
) -> None:
    (tmp_path / "a-file").write_text("a file where a directory should be")
    (tmp_path / "notes.sqlite").write_text("these are notes, not a database")
    before = sorted(p.name for p in tmp_path.iterdir())

    result = run_cli("generate", "--db", target.format(tmp=tmp_path), "--conversations", "5")

    assert result.exit_code == 1
    assert result.stderr.startswith("runrecord: error:") and result.stderr.count("\n") == 1
    assert expected in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("holding", [(), ("notes.txt",)], ids=["empty", "not-empty"])
def test_a_directory_named_as_the_database_is_refused_as_a_directory_in_one_line_and_left_as_it_was(
    holding: tuple[str, ...], tmp_path: Path, run_cli: Callable
) -> None:
    directory = tmp_path / "out"
    directory.mkdir()
    for name in holding:
        (directory / name).write_text("kept")

    result = run_cli("generate", "--db", f"sqlite:///{directory}", "--conversations", "5")

    assert result.exit_code == 1
    assert result.stderr == (
        f"runrecord: error: {directory} is a directory, not a SQLite file; generate writes a new "
        f"installation into a file, such as {directory / 'demo.sqlite'}\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert sorted(p.name for p in directory.iterdir()) == list(holding)


def test_a_fifo_named_as_the_database_is_refused_in_one_line_and_left_as_it_was(
    tmp_path: Path, run_cli: Callable
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # its size reads as 0, as an empty file's does

    result = run_cli("generate", "--db", f"sqlite:///{fifo}", "--conversations", "5")

    assert result.exit_code == 1
    assert result.stderr == (
        f"runrecord: error: {fifo} is not a regular file; generate writes a new installation into a file\n"
    )
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("nodir/m.json", "does not exist"),
        ("a-file/m.json", "is not a directory"),
        (".", "is a directory"),
        # A folder whose permissions let a new file in, while the file system takes none.
        ("/proc/m.json", "m.json: "),
    ],
)
def test_a_manifest_that_cannot_be_written_fails_in_one_line_before_anything_is_written(
    where: str, expected: str, empty_db_url: str, tmp_path: Path, run_cli: Callable
) -> None:
    (tmp_path / "a-file").write_text("a file where a directory should be")
    before = sorted(p.name for p in tmp_path.iterdir())
    manifest = tmp_path / where

    result = run_cli("generate", "--db", empty_db_url, "--conversations", "5", "--manifest", str(manifest))

    assert result.exit_code != 0
    assert result.stderr.startswith("runrecord: error:") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    engine = make_engine(empty_db_url)
    with engine.connect() as connection:
        assert inspect(connection).get_table_names() == []
    engine.dispose()
    if expected != "is a directory":  # an existing directory: click refuses the option itself (exit 2)
        assert result.exit_code == 1 and f"cannot write the manifest {manifest}: " in result.stderr
        assert expected in result.stderr


def test_generate_refuses_a_database_with_half_the_upstream_tables(
    empty_db_url: str, run_cli: Callable
) -> None:
    engine = make_engine(empty_db_url)
    with engine.begin() as connection:
        schema.sys_history.create(connection)
        schema.agentrun.create(connection)
    engine.dispose()

    result = run_cli("generate", "--db", empty_db_url, "--conversations", "5")

    assert result.exit_code == 1 and "not empty" in result.stderr
    engine = make_engine(empty_db_url)
    with engine.connect() as connection:
        assert sorted(inspect(connection).get_table_names()) == ["sys_history", "tx_nrllm_agentrun"]
    engine.dispose()


def test_generate_writes_the_editors_and_one_cli_user_into_be_users(empty_db_url: str) -> None:
    engine = _generate(empty_db_url, 5)

    with engine.connect() as connection:
        users = connection.execute(select(schema.be_users.c.uid, schema.be_users.c.username))
        names: dict[int, str] = {row.uid: row.username for row in users}
        writers = set(connection.execute(select(schema.sys_history.c.userid).distinct()).scalars())
    engine.dispose()

    assert list(names.values()).count("_cli_") == 1
    assert writers <= set(names)


@pytest.mark.parametrize("processing", ["exec", "worker"])
def test_generate_processing_runs_every_conversation_so(
    processing: str, tmp_path: Path, run_cli: Callable
) -> None:
    url = f"sqlite:///{tmp_path / 'demo.sqlite'}"

    result = run_cli(
        "generate", "--db", url, "--conversations", "30", "--now", NOW.isoformat(), "--processing", processing
    )

    assert result.exit_code == 0, result.stderr
    manifest = json.loads((tmp_path / "demo.manifest.json").read_text())
    runs = [json.loads(line) for line in (tmp_path / manifest["runs_file"]).read_text().splitlines()]
    assert set(manifest["summary"]["writes_by_processing"]) == {processing}
    assert {run["processing"] for run in runs} == {processing}
