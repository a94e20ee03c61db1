"""Rates (product team): a summary row of tiles, one filter bar, then one section at a time: Overview (the
rates over time), Release (before/after), Configurations (splits, configuration against configuration),
Outcomes (outcome mix and edit scope), Survival (of AI text), Alerts."""

import streamlit as st

from adapters import schema
from core.groups import ALL_RUNS
from dashboard import state
from dashboard.components import (
    alerts,
    configuration_pair,
    data_as_of,
    edit_scope,
    filter_bar,
    go_on_split,
    group_split,
    guard,
    metric,
    notice_agreement,
    outcome_mix,
    rate_chart,
    rates_tab,
    rule_versions,
    summary_tiles,
    survival_chart,
    two_sided,
)
from dashboard.queries import between as between_queries
from dashboard.queries import rates

st.title("Rates")
version = guard.show([schema.rate.name, schema.release.name, schema.job_run.name], key="guard")
if version is None:
    st.stop()
url, now = state.db_url(), state.hour()
data = version.rates
data_as_of.show(version, key="as_of")
alerts.notice(version, key="alerts_notice")

with guard.reading():
    grains = state.grains(url, data)
    releases = state.releases(url, data)
if not grains:
    st.info(
        "No rates have been measured on this database yet: run `runrecord measure-rates` "
        "(after `runrecord derive-outcomes`)."
    )
    st.stop()

with guard.reading():
    configurations, skills = state.group_values(url, data, grains[0])
    earliest = state.first_period(url, data, grains[0])
today = state.today(now)
filters = filter_bar.show(
    grains,
    releases,
    filter_bar.group_options(configurations, skills),
    today=today,
    earliest=earliest,
    key="filters",
)
grain, span = filters.grain, filters.span
newest = None if releases.empty else releases["released_on"].iloc[-1]
tile_group = filters.group if filters.one_group is not None else filter_bar.ALL
with guard.reading():
    tiles = state.summary(url, data, grain, tile_group, newest, now)
summary_tiles.show(tiles, grain, key="tile")
marked = releases[releases["released_on"] == filters.marker[0]] if filters.marker else releases.iloc[0:0]
if releases.empty:
    st.caption("No release markers yet (`runrecord release add DATE LABEL`).")

tab = rates_tab.show(key="tab")

if tab == "overview":
    if filters.group_kind == filter_bar.ALL:
        with guard.reading():
            charted = state.rate_series(url, data, rates.CHARTED, grain, now)
        if charted.unreadable:
            st.warning(
                f"{charted.unreadable} rate rows have a numerator outside 0..denominator and are left out."
            )
        for name in rates.CHARTED:
            frame = charted.frame[charted.frame["metric"] == name]
            rate_chart.show(frame, marked, rates.LABELS[name], span, grain, key=f"chart_{name}", metric=name)
            rule_versions.show(rate_chart.in_range(frame, span, grain), grain, key=f"rule_versions_{name}")
    else:
        chosen = filters.one_group
        with guard.reading():
            kind = filters.group_kind
            splits = {name: state.group_split(url, data, name, grain, kind, now) for name in rates.CHARTED}
        # A group's line has one colour on every chart, whichever groups a chart draws.
        colours = rate_chart.group_colours(group for split in splits.values() for group in split["group"])
        for name, split in splits.items():
            if chosen is not None:
                split = split[split["group_value"] == chosen.value]
            rate_chart.show(
                split,
                marked,
                rates.LABELS[name],
                span,
                grain,
                key=f"chart_{name}",
                metric=name,
                group_kind=filters.group_kind,
                colours=colours,
            )
        st.caption(
            f"A {filters.group_kind} with fewer than 5 runs in a period has no figure there: a gap in its "
            "line; so has the smallest other where all runs less the lines shown would give a figure of "
            f"fewer than 5 runs away. {rate_chart.SELECT_HINT}"
        )
    with guard.reading():
        agreement = state.notice_agreement(url, data, grain)
    notice_agreement.show(agreement, grain, key="notice_agreement")

elif tab == "release":
    if filters.marker is None:
        st.info(
            "No release marker to compare across (`runrecord release add DATE LABEL`, or choose one above)."
        )
    else:
        st.subheader(f"Before and after {filters.marker[0].isoformat()}: {filters.marker[1]}")
        chosen_metric = metric.show("Rate", rates.COMPARED, rates.LABELS, key="compare_metric")
        weeks = st.select_slider(
            "Weeks on each side", options=rates.COMPARISON_WEEKS, value=4, key="compare_weeks"
        )
        compared = filters.one_group or ALL_RUNS
        with guard.reading():
            report = state.before_after(
                url, data, chosen_metric, grain, filters.marker[0], int(weeks), now, compared
            )
            go_on = state.go_on_split(url, data, grain, filters.marker[0], int(weeks), now)
        two_sided.show(report, rates.LABELS[chosen_metric], key="comparison")
        go_on_split.show(go_on, chosen_metric, key="go_on_split")
        if filters.group_kind != filter_bar.ALL:
            of = "all runs" if compared == ALL_RUNS else filter_bar.group_label(filters.group)
            st.caption(f'The comparison is of {of}; what followed a stored "go on" message is of all runs.')

elif tab == "configurations":
    st.subheader("By configuration or skill")
    kind = filters.group_kind if filters.group_kind != filter_bar.ALL else "configuration"
    split_metric = metric.show("Rate of the split", rates.COMPARED, rates.LABELS, key="split_metric")
    with guard.reading():
        split = state.group_split(url, data, split_metric, grain, kind, now)
    group_split.show(rate_chart.in_range(split, span, grain), split_metric, grain, kind, key="split")
    st.subheader("Configuration against configuration")
    with guard.reading():
        configured = state.rate_configurations(url, data, grain)
    suggested = between_queries.suggested_pair(configured)
    pair = configuration_pair.show([name for name, _ in configured], suggested, key="between_pair")
    if len(configured) < 2:
        st.info("Fewer than two configurations have rates yet: nothing to set against each other.")
    elif pair is not None:
        between_metric = metric.show("Rate compared", rates.COMPARED, rates.LABELS, key="between_metric")
        with guard.reading():
            against = state.configuration_against_configuration(
                url, data, between_metric, grain, pair[0], pair[1], now
            )
        if against is None:
            st.info("These two configurations have no closed period of this rate in common yet.")
        else:
            two_sided.show(against, rates.LABELS[between_metric], key="between")

elif tab == "outcomes":
    st.subheader("Observed outcome mix")
    with guard.reading():
        mix = state.outcome_mix(url, data, grain, now)
        open_runs = state.window_open(url, data, grain)
    outcome_mix.show(mix, open_runs, marked, span, grain, key="mix")
    rule_versions.show(rate_chart.in_range(mix, span, grain), grain, key="mix_rule_versions")
    st.subheader("EDITED by edit scope")
    scope_labels = {metric.value: label for metric, label in rates.EDIT_SCOPES}
    with guard.reading():
        scopes = state.rate_series(url, data, tuple(scope_labels), grain, now)
    edit_scope.show(scopes.frame, scope_labels, marked, span, grain, key="edit_scope")
    rule_versions.show(rate_chart.in_range(scopes.frame, span, grain), grain, key="edit_scope_rule_versions")
    if filters.group_kind != filter_bar.ALL:
        st.caption("The outcome mix and the edit scopes are of all runs.")

elif tab == "survival":
    st.subheader("Survival of AI text")
    with guard.reading():
        derived = state.outcome_configurations(url, version.runs)
        configured = state.rate_configurations(url, data, grain)
    suggested = between_queries.suggested_pair(configured)
    chosen_curves = st.multiselect(
        "Configurations (none: all writes; two: the log-rank test between them)",
        derived,
        default=[name for name in suggested or () if name in derived],
        max_selections=2,
        key="survival_configurations",
    )
    with guard.reading():
        survived = state.survival_curves(url, version.runs, tuple(chosen_curves), state.window_s())
    survival_chart.show(survived, key="survival")

elif tab == "alerts":
    alerts.show(version, key="alerts")

st.divider()
st.download_button(
    "Rates as CSV (aggregates only)",
    lambda: state.aggregates_csv(url, data),  # built when asked for, not on every render
    file_name="runrecord-rates.csv",
    mime="text/csv",
    key="download",
)
st.caption(
    "One row per metric, grain, period and group with its interval; a configuration or skill with fewer than "
    "5 runs in a period reads 'too few to show' and carries no figure, and so does the smallest other where "
    "all runs less the groups shown would give a figure of fewer than 5 runs away. No row names a run or an "
    "editor."
)
