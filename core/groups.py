"""The groups a rate is counted in: all runs, a configuration or a skill, never an editor (DESIGN.md).

A configuration or skill with fewer than MIN_GROUP_RUNS runs in a period is too few to show (DESIGN.md,
"Privacy"); all runs are always shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

# DESIGN.md, "Privacy": a group (e.g. a configuration) with fewer than 5 runs in a period is shown as
# "too few to show"; below that a figure comes close to naming the editor behind it.
MIN_GROUP_RUNS = 5


class GroupKind(StrEnum):
    ALL = "all"
    CONFIGURATION = "configuration"
    SKILL = "skill"


@dataclass(frozen=True, order=True)
class Group:
    kind: GroupKind
    value: str = ""  # a configuration identifier or a skill identifier; "" for a conversation without skill

    @property
    def label(self) -> str:
        """The group as the command line names it: all, configuration:X, skill:Y (skill:none for none)."""
        if self.kind is GroupKind.ALL:
            return "all"
        if self.kind is GroupKind.SKILL and not self.value:
            return "skill:none"
        return f"{self.kind.value}:{self.value}"


ALL_RUNS = Group(GroupKind.ALL)


def parse_group(text: str) -> Group | None:
    """all, configuration:X or skill:Y ("skill:none" and "skill:" are conversations without a skill)."""
    if text == "all":
        return ALL_RUNS
    kind, colon, value = text.partition(":")
    if not colon or kind not in (GroupKind.CONFIGURATION.value, GroupKind.SKILL.value):
        return None
    if kind == GroupKind.SKILL.value and value == "none":
        value = ""
    return Group(GroupKind(kind), value)


def groups_of(configuration: str | None, skill: str | None) -> tuple[Group, ...]:
    """All, the run's configuration when known, the conversation's skill when a conversation names the run."""
    groups = [ALL_RUNS]
    if configuration is not None:
        groups.append(Group(GroupKind.CONFIGURATION, configuration))
    if skill is not None:
        groups.append(Group(GroupKind.SKILL, skill))
    return tuple(groups)


def show_group(runs: int) -> bool:
    """A group is shown only with at least MIN_GROUP_RUNS runs in the period; fewer are too few to show."""
    return runs >= MIN_GROUP_RUNS


def shown(group: Group, runs: int) -> bool:
    """A configuration or skill below MIN_GROUP_RUNS runs is too few to show (DESIGN.md, "Privacy")."""
    return group.kind is GroupKind.ALL or show_group(runs)


def hidden_groups(all_runs: int, runs: Mapping[str, int]) -> frozenset[str]:
    """The groups of one kind hidden in one period: those too few to show, and as many of the smallest others
    as keep them from being worked out by subtraction.

    All runs are always shown, so all runs less the groups shown is the figure of the groups hidden and of the
    runs no group shown holds (no configuration, or a group the view leaves out): from one to
    MIN_GROUP_RUNS - 1 runs together, that difference would be a figure the suppression hides (DESIGN.md,
    "Privacy"). A group without a run may still carry figures (the answers of runs nr-llm purged keep their
    skill), so it counts as hidden with nothing to hide it among. `runs` maps each group value of the kind
    that has a figure in the period to its runs (0 where none is counted)."""
    hidden = {value for value, count in runs.items() if not show_group(count)}
    together = max(all_runs - sum(runs.values()), 0) + sum(runs[value] for value in hidden)
    if together == 0 and not hidden:
        return frozenset()
    for value in sorted((v for v in runs if v not in hidden), key=lambda v: (runs[v], v)):
        if show_group(together):
            break
        hidden.add(value)
        together += runs[value]
    return frozenset(hidden)
