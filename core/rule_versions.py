"""Which rule versions the runs behind a figure were derived under (DESIGN.md rule 8).

A derived row is final (003_…, Decision: "Derivation happens after it closes, once per write, and the answer
is final"), so when core.outcomes.RULE_VERSION rises the rows derived before keep their version and the new
rules apply only to runs derived from then on. A period whose runs span the change therefore sums outcomes
classified by two sets of rules: its figure is still the truth about those rows, but not a measurement under
one rule, and whatever shows it says so beside it. A period whose runs are all of one version says nothing.

measure-rates stores, with each rate row counted from derived outcomes, the versions of the runs it counted
(core.counting.Count.rule_versions, a set: a side of a comparison is the union of its periods'). Stored as
text, oldest first, separated by STORED_SEPARATOR, at most STORED_LENGTH characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

STORED_SEPARATOR = ","
# The length of tx_runrecord_rate.rule_versions: fifteen versions of core.outcomes' 16 characters. More
# versions in one period than that keep the oldest and the newest, which still says that it mixes them.
STORED_LENGTH = 255

_NUMBERS = re.compile(r"\d+")


def _order(version: str) -> tuple[tuple[int, ...], str]:
    # "2026.9-1" before "2026.11-1": by the numbers in it, then by its text.
    return tuple(int(number) for number in _NUMBERS.findall(version)), version


def ordered(versions: Iterable[str]) -> tuple[str, ...]:
    """The distinct versions, oldest first; an empty one (a row that recorded none) is left out."""
    return tuple(sorted({version for version in versions if version}, key=_order))


def stored(versions: Iterable[str]) -> str:
    """The versions as tx_runrecord_rate.rule_versions holds them."""
    found = ordered(versions)
    text = STORED_SEPARATOR.join(found)
    if len(text) > STORED_LENGTH:
        text = STORED_SEPARATOR.join((found[0], found[-1]))
    return text


def read(text: str | None) -> frozenset[str]:
    """The versions a stored text names; none for an empty one (rows not counted from derived outcomes, or
    written before the column existed)."""
    return frozenset(version.strip() for version in (text or "").split(STORED_SEPARATOR) if version.strip())


def mixes(versions: Iterable[str]) -> bool:
    """Whether the runs behind a figure were derived under more than one rule version."""
    return len(ordered(versions)) > 1


def mixing_note(versions: Iterable[str]) -> str | None:
    """The note beside a figure whose runs span versions ("mixes runs derived under rules A and B"); None
    for a figure of one version or of none."""
    found = ordered(versions)
    if len(found) < 2:
        return None
    listed = f"{', '.join(found[:-1])} and {found[-1]}"
    return f"mixes runs derived under rules {listed}"
