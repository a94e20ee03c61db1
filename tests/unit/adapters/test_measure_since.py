"""From which stamp a rerun reads a table's rows again (adapters.measure_since.read_again_from)."""

from __future__ import annotations

from adapters.measure_since import read_again_from

MARGIN = 300
MARK = 1_800_000_000


def test_without_the_time_of_the_last_read_rows_are_read_again_from_the_margin_before_the_mark() -> None:
    assert read_again_from(MARK, None, MARGIN) == MARK - MARGIN


def test_a_mark_more_than_the_margin_before_the_last_read_leaves_only_the_rows_stamped_after_it() -> None:
    assert read_again_from(MARK, MARK + 3600, MARGIN) == MARK + 1


def test_a_mark_within_the_margin_of_the_last_read_reads_again_from_the_margin_before_the_read() -> None:
    assert read_again_from(MARK, MARK + 100, MARGIN) == MARK + 100 - MARGIN


def test_rows_are_never_read_again_from_further_back_than_the_margin_before_the_mark() -> None:
    assert read_again_from(MARK, MARK - 3600, MARGIN) == MARK - MARGIN
