"""bench_measure's verdicts: the full run within 10x its baseline is what must be reached, 4x the aim."""

from __future__ import annotations

import argparse

from benchmarks.bench_measure import _table

_COUNTS = {
    "tx_nrllm_agentrun": 10,
    "tx_nrmcpagent_conversation": 10,
    "tx_nrmcpagent_message": 20,
    "tx_nrllm_agentrun_event": 100,
}


def _verdicts(full_s: float, rerun_s: float) -> list[str]:
    rows = _table(
        argparse.Namespace(engine="sqlite", scale=0.1, shape="wide"),
        _COUNTS,
        {"seconds": 0.3},
        {"seconds": 1.0, "texts": 5, "every_message_s": 2.0},
        {"seconds": full_s, "parts": {"fill_runs": full_s / 2}, "peak_mb": 70.0},
        {"seconds": rerun_s, "peak_mb": 50.0},
    )
    return [row for row in rows if not row.startswith("|")][1:]


def test_a_full_run_between_4x_and_10x_its_baseline_meets_the_goal_and_not_the_aim() -> None:
    assert _verdicts(7.0, 0.1)[:2] == [
        "full within 10x the baseline: 7.0x, met",
        "full within 4x the baseline: 7.0x, NOT met",
    ]


def test_a_full_run_beyond_10x_its_baseline_meets_neither() -> None:
    assert _verdicts(18.7, 0.1)[:2] == [
        "full within 10x the baseline: 18.7x, NOT met",
        "full within 4x the baseline: 18.7x, NOT met",
    ]


def test_the_plain_read_of_every_message_is_judged_beside_the_baseline() -> None:
    assert _verdicts(18.7, 0.1)[2:4] == [
        "full within 10x the plain read of every message: 9.3x, met",
        "full within 4x the plain read of every message: 9.3x, NOT met",
    ]


def test_a_rerun_of_5_percent_of_the_full_run_or_more_is_not_under_5_percent() -> None:
    assert "rerun under 5% of the full run: NOT met" in _verdicts(10.0, 0.5)
    assert "rerun under 5% of the full run: met" in _verdicts(10.0, 0.49)
