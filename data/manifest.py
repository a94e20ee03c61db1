"""What `runrecord generate` writes beside the database: a manifest of what it planted (the summary's counts,
the release, the canary and the campaign) and a runs file with the expected observed outcome of every run, its
claims and its notice, a line a run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy.engine import URL

from adapters.database import RunrecordError, describe
from core.window import window_closed
from data.agent_run import Write
from data.fates import DAY, Expected, RecordReading, expected_write, run_outcome
from data.processes import Worker
from data.story import (
    CANARY_CONFIGURATION,
    CANARY_EDIT_SHARE,
    CANARY_PROMOTED_SHARE,
    CANARY_SHARE,
    SEO_CONFIGURATION,
    Planted,
    Story,
)


@dataclass
class Summary:
    """Counts of what was planted, for the manifest and the command's last line."""

    conversations: int = 0
    runs: int = 0
    writes: int = 0
    runs_by_outcome: dict[str, int] = field(default_factory=dict)  # runs whose window has closed by now
    writes_by_outcome: dict[str, int] = field(default_factory=dict)
    unknown_by_reason: dict[str, int] = field(default_factory=dict)
    runs_inside_window: int = 0
    claims_unwritten: int = 0
    # Answers flagged nothingSaved that core's claim rule does not flag (story.WIDER_FLAGGED), and the
    # first completed answer stored with the notice: what notice_agreement is short of 100% by, and from when.
    notice_disagreements: int = 0
    first_notice_at: int | None = None
    stuck_conversations: int = 0
    campaign_tours: int = 0
    # How the chat's processes stamped the AI rows (processes.ProcessingChoice), and the history cases planted
    # beside the fates (story.KEPT_RECORD_CASES and the rest), counted over every write and conversation.
    writes_by_processing: dict[str, int] = field(default_factory=dict)
    worker_writes_with_a_restart_in_their_window: int = 0
    planted_cases: dict[str, int] = field(default_factory=dict)
    # Writes whose own row, as the rules match it, is another row than the one the write inserted.
    own_rows_misread: int = 0


def record_planted(
    planted: Planted, story: Story, summary: Summary, out: IO[str] | None, *, cli_user: int, worker: Worker
) -> None:
    """Counts what one conversation planted into `summary`, and writes a line per run to the runs file."""
    summary.conversations += 1
    for case, count in planted.cases.items():
        summary.planted_cases[case] = summary.planted_cases.get(case, 0) + count
    by_record: dict[str, list[Write]] = {}
    for run in planted.runs:
        for write in run.writes:
            by_record.setdefault(write.record.ref, []).append(write)
    readings = {
        ref: RecordReading(writes[0].record, writes, horizon=story.horizon, cli_user=cli_user)
        for ref, writes in by_record.items()
    }
    summary.claims_unwritten += len(planted.claims_unwritten)
    summary.notice_disagreements += len(planted.notice_disagreements)
    summary.stuck_conversations += int(planted.stuck)
    claims = {uuid for _, uuid in planted.claims_unwritten}
    disagreements = {uuid for _, uuid in planted.notice_disagreements}
    for run in planted.runs:
        summary.runs += 1
        answer = run.completed_answer
        if answer is not None and answer[1] == "nothingSaved":
            first = summary.first_notice_at
            summary.first_notice_at = answer[0] if first is None else min(first, answer[0])
        expected: list[tuple[int, str, Expected]] = []
        for write in run.writes:
            reading = readings[write.record.ref]
            outcome = expected_write(write, reading, oldest_retained=story.horizon, window_s=story.window_s)
            expected.append((write.event_uid, write.record.ref, outcome))
            summary.own_rows_misread += int(reading.misread(write))
            if planted.processing is not None:
                _count(summary.writes_by_processing, planted.processing.value)
                if planted.processing == worker.processing and worker.restarted_between(
                    write.written_at, write.written_at + story.window_s
                ):
                    summary.worker_writes_with_a_restart_in_their_window += 1
        summary.writes += len(expected)
        last_write = max((w.written_at for w in run.writes), default=None)
        due = last_write is not None and window_closed(last_write, story.now, story.window_s)
        run_result: str | None = None
        if expected:
            run_result = run_outcome([e.outcome for _, _, e in expected])
            if due:
                _count(summary.runs_by_outcome, run_result)
                for _, _, e in expected:
                    _count(summary.writes_by_outcome, e.outcome)
                    if e.reason:
                        _count(summary.unknown_by_reason, e.reason)
            else:
                summary.runs_inside_window += 1
        if out is not None:
            line = {
                "run": run.uuid,
                "conversation": planted.conversation,
                "configuration": run.chat.configuration,
                "skill": run.chat.skill,
                "processing": None if planted.processing is None else planted.processing.value,
                "cases": dict(sorted(planted.cases.items())),
                "status": run.status,
                "last_write_at": last_write,
                "due": due,
                "outcome": run_result,
                "claims_unwritten": run.uuid in claims,
                "answer": None if answer is None else {"at": answer[0], "notice": answer[1]},
                "notice_disagrees": run.uuid in disagreements,
                "writes": [
                    {
                        "event": uid,
                        "record": ref,
                        "outcome": e.outcome,
                        "reason": e.reason,
                        "edit_scope": e.edit_scope,
                    }
                    for uid, ref, e in expected
                ],
            }
            out.write(json.dumps(line, separators=(",", ":")) + "\n")


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def write_summary(
    manifest: Path, story: Story, seed: int, summary: Summary, oldest: int | None, target: URL
) -> None:
    def day(unix: int) -> str:
        return datetime.fromtimestamp(unix, UTC).date().isoformat()

    document: dict[str, Any] = {
        "database": describe(target),
        "seed": seed,
        "now": datetime.fromtimestamp(story.now, UTC).isoformat(),
        "window_days": story.window_s // DAY,
        "release": {
            "date": day(story.release),
            "label": "Prompt rule: claim a change only on a write result",
        },
        "notice_since": day(story.notice_since),
        "run_record_since": day(story.run_record_since),
        "canary": {
            "configuration": CANARY_CONFIGURATION,
            "stable": SEO_CONFIGURATION,
            "since": day(story.canary_since),
            "share_of_seo_tours": CANARY_SHARE,
            "promoted": day(story.canary_promoted),
            "share_of_seo_tours_promoted": CANARY_PROMOTED_SHARE,
            "edit_share_of_kept_records": CANARY_EDIT_SHARE,
        },
        "campaign": {
            "weeks": [day(week) for week in story.campaign_weeks()],
            "tours": summary.campaign_tours,
        },
        "history_horizon": oldest,
        "conversation_1": {
            "uid": 1,
            "story": "000_6007b8db2f9b43d2.txt: six approved cards on one page, then a denial",
        },
        "summary": summary.__dict__,
        "runs_file": runs_path(manifest).name,
    }
    manifest.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _check_manifest(manifest: Path) -> None:
    """The manifest can be written where it is to go; RunrecordError, before anything is written, if not."""
    folder = manifest.parent
    if not folder.exists():
        problem = f"{folder} does not exist"
    elif not folder.is_dir():
        problem = f"{folder} is not a directory"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"{folder} is not writable"
    elif manifest.is_dir():
        problem = "it is a directory"
    else:
        return
    raise RunrecordError(f"cannot write the manifest {manifest}: {problem}")


def runs_path(manifest: Path) -> Path:
    return manifest.with_name(manifest.name.removesuffix(".json") + ".runs.jsonl")


@contextmanager
def manifest_writer(manifest: Path | None) -> Iterator[IO[str] | None]:
    if manifest is None:
        yield None
        return
    _check_manifest(manifest)  # entered after the target was found usable, before anything is written
    runs_file = runs_path(manifest)
    partial = runs_file.with_name(runs_file.name + ".partial")
    try:
        out = partial.open("w", encoding="utf-8")
    except OSError as error:  # a folder that takes no new file though it looks writable (/proc)
        raise RunrecordError(f"cannot write the manifest {manifest}: {error.strerror or error}") from error
    try:
        with out:
            yield out
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, runs_file)
