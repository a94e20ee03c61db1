"""The Rates page's summary tiles (core.summary): the last closed period, the change against the period
before and across the newest release, each coloured by whether the move is good for its metric."""

from __future__ import annotations

from datetime import date

import pytest

from core.counting import Count
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import DEFINITIONS, Better, Metric
from core.periods import Grain, comparison_periods
from core.summary import RELEASE_WEEKS, TILE_METRICS, Tile, Tone, last_closed, periods_read, tiles

FIRST_OPEN = date(2026, 11, 23)  # a Monday: the week a run may still change
LAST = date(2026, 11, 16)
PREVIOUS = date(2026, 11, 9)
RELEASE = date(2026, 10, 12)


def _figures(metric: Metric, per_period: dict[date, tuple[int, int, int]]) -> dict[tuple[str, date], Count]:
    """(numerator, denominator, runs) of one metric per period."""
    found: dict[tuple[str, date], Count] = {}
    for period, (numerator, denominator, runs) in per_period.items():
        found[(metric.value, period)] = Count(numerator, denominator, 0)
        found[(Metric.RUNS.value, period)] = Count(runs, runs, 0)
    return found


def _one(
    metric: Metric,
    per_period: dict[date, tuple[int, int, int]],
    *,
    release: date | None = None,
    release_labels: tuple[str, ...] = (),
    group: Group = ALL_RUNS,
) -> Tile:
    (tile,) = tiles(
        _figures(metric, per_period),
        grain=Grain.WEEK,
        first_open=FIRST_OPEN,
        release=release,
        release_labels=release_labels,
        group=group,
        metrics=(metric,),
    )
    return tile


def test_the_tiles_are_edited_nothing_saved_stored_and_recomputed_denials_and_go_on() -> None:
    assert TILE_METRICS == (
        Metric.EDITED_RATE,
        Metric.NOTHING_SAVED_RATE,
        Metric.CLAIMED_UNWRITTEN_RATE,
        Metric.DENIAL_RATE,
        Metric.GO_ON_WHILE_WAITING,
    )


@pytest.mark.parametrize("metric", TILE_METRICS, ids=lambda metric: metric.value)
def test_every_tiles_metric_says_which_way_is_good_and_it_is_lower(metric: Metric) -> None:
    assert DEFINITIONS[metric].better is Better.LOWER


def test_the_last_closed_period_is_the_one_before_the_first_open_one() -> None:
    assert last_closed(FIRST_OPEN, Grain.WEEK) == LAST
    assert last_closed(date(2026, 11, 25), Grain.DAY) == date(2026, 11, 24)


def test_a_tile_shows_the_last_closed_period_with_its_n_and_interval() -> None:
    tile = _one(Metric.EDITED_RATE, {LAST: (30, 100, 120), PREVIOUS: (30, 100, 120)})

    after = tile.previous.after
    assert tile.period == LAST
    assert (after.proportion.numerator, after.proportion.denominator) == (30, 100)
    assert after.proportion.interval is not None
    assert after.proportion.interval.low < 0.3 < after.proportion.interval.high


# (before, after, tone) of a metric where lower is better, one week against the next
TONES = [
    ((20, 400), (80, 400), Tone.WORSE),
    ((80, 400), (20, 400), Tone.BETTER),
    ((40, 400), (42, 400), Tone.NONE),
]


@pytest.mark.parametrize(("before", "after", "expected"), TONES, ids=["rose", "fell", "no significant move"])
def test_a_significant_move_is_coloured_by_the_direction_the_registry_calls_good(
    before: tuple[int, int], after: tuple[int, int], expected: Tone
) -> None:
    tile = _one(Metric.EDITED_RATE, {PREVIOUS: (*before, 400), LAST: (*after, 400)})

    assert tile.previous_tone is expected


def test_a_metric_that_moves_neither_way_gets_no_colour_even_when_it_moves_significantly() -> None:
    tile = _one(Metric.EDITED_SAME_FIELDS, {PREVIOUS: (20, 400, 400), LAST: (80, 400, 400)})

    assert tile.previous.two_sided.verdict == "rose significantly"
    assert tile.previous_tone is Tone.NONE


def test_the_change_across_the_newest_release_sums_four_weeks_on_each_side() -> None:
    sides = comparison_periods(RELEASE, RELEASE_WEEKS, Grain.WEEK)
    per_period = dict.fromkeys(sides.before, (20, 100, 100))
    per_period |= dict.fromkeys(sides.after, (2, 100, 100))

    tile = _one(Metric.NOTHING_SAVED_RATE, per_period, release=RELEASE, release_labels=("Prompt rule",))

    release = tile.release
    assert release is not None
    assert (release.before.proportion.numerator, release.before.proportion.denominator) == (80, 400)
    assert (release.after.proportion.numerator, release.after.proportion.denominator) == (8, 400)
    assert release.two_sided.verdict == "fell significantly: better"
    assert tile.release_tone is Tone.BETTER


def test_without_a_release_marker_a_tile_has_no_change_across_one() -> None:
    tile = _one(Metric.EDITED_RATE, {LAST: (30, 100, 120)})

    assert tile.release is None and tile.release_tone is Tone.NONE


def test_a_configuration_with_fewer_than_five_runs_in_the_period_is_too_few_to_show_and_has_no_colour() -> (
    None
):
    group = Group(GroupKind.CONFIGURATION, "rare-assistant")

    tile = _one(Metric.EDITED_RATE, {PREVIOUS: (1, 30, 30), LAST: (3, 4, 4)}, group=group)

    assert not tile.previous.after.shown
    assert tile.previous.two_sided.comparison is None
    assert tile.previous_tone is Tone.NONE


def test_all_runs_are_shown_however_few() -> None:
    tile = _one(Metric.EDITED_RATE, {PREVIOUS: (1, 3, 3), LAST: (3, 4, 4)}, group=ALL_RUNS)

    assert tile.previous.after.shown


def test_the_tiles_read_the_last_two_closed_periods_and_both_sides_of_the_release() -> None:
    read = periods_read(FIRST_OPEN, Grain.WEEK, RELEASE)

    sides = comparison_periods(RELEASE, RELEASE_WEEKS, Grain.WEEK)
    assert set(read) == {PREVIOUS, LAST, *sides.before, *sides.after}
    assert periods_read(FIRST_OPEN, Grain.WEEK, None) == (PREVIOUS, LAST)
