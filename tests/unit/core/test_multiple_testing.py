"""A measurement's comparisons corrected together (core.multiple_testing), against statsmodels."""

from __future__ import annotations

from random import Random

import pytest
from statsmodels.stats.multitest import multipletests

from core.multiple_testing import FALSE_DISCOVERY_RATE, adjusted_p_values, rejected


def _p_values(seed: int) -> list[float]:
    """Between 1 and 120 p-values, a few of them small, some tied."""
    random = Random(seed)
    found = [random.random() ** random.choice((1, 2, 6, 12)) for _ in range(random.randint(1, 120))]
    return found + found[: random.randint(0, 3)]


@pytest.mark.parametrize("seed", range(60))
def test_benjamini_hochberg_rejects_what_statsmodels_fdr_bh_rejects_and_adjusts_alike(seed: int) -> None:
    p_values = _p_values(seed)

    reject, corrected, *_ = multipletests(p_values, alpha=FALSE_DISCOVERY_RATE, method="fdr_bh")

    assert rejected(p_values) == tuple(bool(value) for value in reject)
    assert adjusted_p_values(p_values) == pytest.approx(list(corrected), rel=1e-12)


@pytest.mark.parametrize(
    ("p_values", "expected"),
    [
        ([0.01], (True,)),
        ([0.05], (True,)),  # BH keeps p ≤ k·q/m; the verdict (p < 0.05) then decides
        ([0.01, 0.5], (True, False)),  # 0.01 ≤ 1 × 0.05 / 2
        ([0.03, 0.04], (True, True)),  # the larger passes at rank 2 (0.04 ≤ 0.05) and takes the smaller
        ([0.03, 0.06], (False, False)),  # 0.03 > 0.025, 0.06 > 0.05
        ([], ()),
    ],
)
def test_the_k_smallest_are_rejected_for_the_largest_k_with_p_at_most_k_q_over_m(
    p_values: list[float], expected: tuple[bool, ...]
) -> None:
    assert rejected(p_values) == expected
