"""The Runs table's filters, kept in the URL as JSON (?runs=): configuration, skill, status, outcome and the
start's period; what measure-rates found of a run's answer (a claim it never made, a denial of recorded
writes, the stored notice, a notice that disagrees with the recomputation); a run's uuid or short id."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from adapters.runs import NO_OUTCOME, OUTCOMES, RunFilter
from core.formatting import NO_SKILL as NO_SKILL_TEXT
from core.formatting import outcome_label, scope_label
from dashboard import url_state
from dashboard.queries.rates import LABELS
from dashboard.queries.runs import STATUSES

ANY = "any"
# (filter field, its label, what it keeps): what measure-rates found of the run's completed answer.
FLAGS: tuple[tuple[str, str, str], ...] = (
    ("claim", "Claims an unwritten change", "The answer claims a change the run never made"),
    ("denial", "Denies recorded writes", "The answer denies writes the run record shows"),
    ("notice", "nothingSaved stored", "The chat stored the nothingSaved notice on the answer"),
    (
        "disagreement",
        "Notice disagrees",
        "The stored notice and runrecord's recomputation disagree (from the first stored notice on)",
    ),
)


# The runs without an observed outcome: those that wrote nothing (the table's "no writes") and those whose
# window is open or not derived yet ("window closes on …").
NO_OUTCOME_TEXT = "none (no writes, or window not closed)"


def show(configurations: Sequence[str], skills: Sequence[str], *, key: str) -> RunFilter:
    """The chosen filter, written back to the URL. It starts from the URL on a session's first run, and
    whenever the URL carries a ?runs= this page did not write there: a link followed from Rates or an alert,
    or Back to an earlier filter, within the same session. A URL without ?runs= (the menu) keeps the
    session's filter."""
    in_url = url_state.runs_filter_text()
    brought = in_url is not None and in_url != st.session_state.get(f"{key}{_WRITTEN}")
    if key not in st.session_state or brought:
        param = url_state.runs_filter()
        if param.refused:
            st.warning(param.refused)
        _forget_choices(key)
        st.session_state[key] = param.value
    start: RunFilter = st.session_state[key]
    found = _uuid(start, key=f"{key}_uuid")
    # The dates' column is wider: a range ("2026-11-01 – 2026-11-25") is read whole.
    columns = st.columns([1, 1, 1, 1, 1.75])
    configuration = _choose(
        columns[0], "Configuration", [*configurations], start.configuration, f"{key}_configuration"
    )
    skill = _choose(
        columns[1], "Skill", [*skills], start.skill, f"{key}_skill", lambda value: value or NO_SKILL_TEXT
    )
    status = _choose(columns[2], "Status", list(STATUSES), start.status, f"{key}_status")
    outcome = _choose(
        columns[3],
        "Observed outcome",
        [*OUTCOMES, NO_OUTCOME],
        start.outcome,
        f"{key}_outcome",
        lambda value: NO_OUTCOME_TEXT if value == NO_OUTCOME else outcome_label(value),
    )
    period = columns[4].date_input(
        "Started between",
        value=[start.started_from, start.started_to] if start.started_from and start.started_to else [],
        key=f"{key}_period",
        format="YYYY-MM-DD",
    )
    started_from, started_to = _period(period)
    linked = _from_rates(start, key=f"{key}_ended")
    flags = st.columns(len(FLAGS))
    chosen_flags = {
        name: column.checkbox(label, value=getattr(start, name), help=help_text, key=f"{key}_{name}")
        for column, (name, label, help_text) in zip(flags, FLAGS, strict=True)
    }
    chosen = replace(
        start,
        configuration=configuration,
        skill=skill,
        status=status,
        outcome=outcome,
        started_from=started_from,
        started_to=started_to,
        uuid=found,
        ended_from=linked.ended_from,
        ended_to=linked.ended_to,
        counted=linked.counted,
        scope=linked.scope,
        **chosen_flags,
    )
    st.session_state[key] = chosen
    st.session_state[f"{key}{_WRITTEN}"] = url_state.keep_runs_filter(chosen)
    return chosen


_WRITTEN = "__written"  # the ?runs= text this page last wrote into the URL


def _forget_choices(key: str) -> None:
    """The filter's widgets drop what they hold, so that each shows the filter the URL brought."""
    widgets = (
        "uuid",
        "configuration",
        "skill",
        "status",
        "outcome",
        "period",
        "ended",
        *(f[0] for f in FLAGS),
    )
    for name in widgets:
        st.session_state.pop(f"{key}_{name}", None)


def _from_rates(start: RunFilter, *, key: str) -> RunFilter:
    """The filters only a link from Rates sets (no widget does): the end's period, the rate counting the runs
    and the edit scope, said, and dropped on request; the other filters are left unset."""
    linked = RunFilter(
        ended_from=start.ended_from, ended_to=start.ended_to, counted=start.counted, scope=start.scope
    )
    if linked == RunFilter():
        return linked
    said, clear = st.columns([5, 1])
    parts = []
    if start.counted is not None:
        parts.append(f"Runs counted in the denominator of {LABELS.get(start.counted, start.counted)}")
    if start.scope is not None:
        parts.append(f"{'of them ' if parts else ''}EDITED runs of edit scope {scope_label(start.scope)}")
    if start.ended_from is not None or start.ended_to is not None:
        span = " – ".join(day.isoformat() if day else "…" for day in (start.ended_from, start.ended_to))
        parts.append(f"{'ending' if parts else 'Runs ending'} {span} (the period a rate counts them in)")
    # Placeholders: a click clears the banner and the button in the run that handles it.
    note, button = said.empty(), clear.empty()
    note.info(f"{', '.join(parts)}, as the link from Rates asked.")
    if button.button("Drop the link's filter", key=key):
        note.empty()
        button.empty()
        return RunFilter()
    return linked


def _uuid(start: RunFilter, *, key: str) -> str | None:
    text = st.text_input(
        "Find a run",
        value=start.uuid or "",
        placeholder="its uuid, or the short id the table shows",
        key=key,
    )
    if not text.strip():
        return None
    found = url_state.run_reference(text)
    if found is None:
        st.warning("That is not a run's uuid or short id (its first 8 hex digits); it was ignored.")
    return found


def _choose(
    column: DeltaGenerator,
    label: str,
    options: list[str],
    current: str | None,
    key: str,
    name: Callable[[str], str] = str,
) -> str | None:
    choices = [ANY, *options]
    if current is not None and current not in choices:
        choices.append(current)
    index = choices.index(current) if current is not None else 0
    chosen = column.selectbox(
        label, choices, index=index, key=key, format_func=lambda value: ANY if value == ANY else name(value)
    )
    return None if chosen == ANY else str(chosen)


def _period(value: object) -> tuple[date | None, date | None]:
    if isinstance(value, tuple | list) and len(value) == 2 and all(isinstance(d, date) for d in value):
        return value[0], value[1]
    return None, None
