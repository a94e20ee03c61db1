"""The benchmark installation's shapes give the traffic they name."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.engine import URL

from adapters import schema
from adapters.database import make_engine
from benchmarks.installation import SHAPES, build, full_plan


def _writes_per_user_and_record(tmp_path: Path, shape: str) -> tuple[int, int]:
    """How many backend users ran the agent, and the most AI writes one of them made to one record."""
    url = URL.create("sqlite", database=str(tmp_path / f"{shape}.sqlite"))
    build(url, full_plan(0.002, SHAPES[shape]))
    run, event = schema.agentrun, schema.agentrun_event
    engine = make_engine(url)
    try:
        with engine.connect() as connection:
            users = connection.execute(select(func.count(run.c.be_user.distinct()))).scalar_one()
            writes = connection.execute(
                select(run.c.be_user, event.c.payload)
                .select_from(event.join(run, run.c.uid == event.c.run))
                .where(event.c.kind == "tool_write")
            )
            lanes = Counter(
                (user, target["writeTargetTable"], target["writeTargetUid"])
                for user, payload in writes
                for target in (json.loads(payload),)
            )
    finally:
        engine.dispose()
    most = max(lanes.values())
    return int(users), int(most)


def test_the_one_editor_shape_puts_a_hot_records_writes_in_one_lane(tmp_path: Path) -> None:
    users, most = _writes_per_user_and_record(tmp_path, "one-editor")
    wide_users, wide_most = _writes_per_user_and_record(tmp_path, "wide")
    assert users == 1
    assert wide_users > 1
    # A fifth of 2,000 writes to one hot record, by one editor: one lane of them all.
    assert most >= 300
    assert most > 5 * wide_most
