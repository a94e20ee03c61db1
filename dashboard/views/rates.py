"""Rates (product team): EDITED and nothingSaved over time, releases, before/after, outcome mix, splits,
configuration against configuration, the survival of AI text."""

import streamlit as st

from adapters import schema
from dashboard import state
from dashboard.components import (
    alerts,
    configuration_pair,
    data_as_of,
    edit_scope,
    go_on_split,
    grain,
    group_kind,
    group_split,
    guard,
    metric,
    notice_agreement,
    outcome_mix,
    rate_chart,
    release_marker,
    rule_versions,
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
alerts.show(version, key="alerts")

with guard.reading():
    grains = state.grains(url, data)
    releases = state.releases(url, data)
if not grains:
    st.info(
        "No rates have been measured on this database yet: run `runrecord measure-rates` "
        "(after `runrecord derive-outcomes`)."
    )
    st.stop()
chosen_grain = grain.show(grains, key="grain")
with guard.reading():
    charted = state.rate_series(url, data, rates.CHARTED, chosen_grain, now)
if charted.unreadable:
    st.warning(f"{charted.unreadable} rate rows have a numerator outside 0..denominator and are left out.")
if releases.empty:
    st.caption("No release markers yet (`runrecord release add DATE LABEL`).")

st.header("EDITED and nothingSaved over time")
for name in rates.CHARTED:
    frame = charted.frame[charted.frame["metric"] == name]
    rate_chart.show(frame, releases, rates.LABELS[name], key=f"chart_{name}")
    rule_versions.show(frame, chosen_grain, key=f"rule_versions_{name}")
with guard.reading():
    agreement = state.notice_agreement(url, data, chosen_grain)
notice_agreement.show(agreement, chosen_grain, key="notice_agreement")

st.header("Before and after a release")
marker = release_marker.show(releases, key="marker")
if marker is None:
    st.info("No release marker to compare across yet (`runrecord release add DATE LABEL`).")
else:
    chosen_metric = metric.show("Rate", rates.COMPARED, rates.LABELS, key="compare_metric")
    weeks = st.select_slider(
        "Weeks on each side", options=rates.COMPARISON_WEEKS, value=4, key="compare_weeks"
    )
    with guard.reading():
        report = state.before_after(url, data, chosen_metric, chosen_grain, marker[0], int(weeks), now)
        go_on = state.go_on_split(url, data, chosen_grain, marker[0], int(weeks), now)
    two_sided.show(report, rates.LABELS[chosen_metric], key="comparison")
    go_on_split.show(go_on, chosen_metric, key="go_on_split")

st.header("Observed outcome mix")
with guard.reading():
    mix = state.outcome_mix(url, data, chosen_grain, now)
    open_runs = state.window_open(url, data, chosen_grain)
outcome_mix.show(mix, open_runs, releases, key="mix")
rule_versions.show(mix, chosen_grain, key="mix_rule_versions")

st.header("EDITED by edit scope")
scope_labels = dict(rates.EDIT_SCOPES)
with guard.reading():
    scopes = state.rate_series(url, data, tuple(scope_labels), chosen_grain, now)
edit_scope.show(scopes.frame, scope_labels, releases, key="edit_scope")
rule_versions.show(scopes.frame, chosen_grain, key="edit_scope_rule_versions")

st.header("By configuration or skill")
kind = group_kind.show(rates.GROUP_KINDS, key="group_kind")
split_metric = metric.show("Rate of the split", rates.COMPARED, rates.LABELS, key="split_metric")
with guard.reading():
    split = state.group_split(url, data, split_metric, chosen_grain, kind, now)
group_split.show(split, split_metric, chosen_grain, kind, key="split")

st.header("Configuration against configuration")
with guard.reading():
    configured = state.rate_configurations(url, data, chosen_grain)
suggested = between_queries.suggested_pair(configured)
pair = configuration_pair.show([name for name, _ in configured], suggested, key="between_pair")
if len(configured) < 2:
    st.info("Fewer than two configurations have rates yet: nothing to set against each other.")
elif pair is not None:
    between_metric = metric.show("Rate compared", rates.COMPARED, rates.LABELS, key="between_metric")
    with guard.reading():
        against = state.configuration_against_configuration(
            url, data, between_metric, chosen_grain, pair[0], pair[1], now
        )
    if against is None:
        st.info("These two configurations have no closed period of this rate in common yet.")
    else:
        two_sided.show(against, rates.LABELS[between_metric], key="between")

st.header("Survival of AI text")
with guard.reading():
    derived = state.outcome_configurations(url, version.runs)
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

st.header("Download")
st.download_button(
    "Rates as CSV (aggregates only)",
    lambda: state.aggregates_csv(url, data),  # built when asked for, not on every render
    file_name="runrecord-rates.csv",
    mime="text/csv",
    key="download",
)
st.caption(
    "One row per metric, grain, period and group with its interval; a configuration or skill with fewer than "
    "5 runs in a period reads 'too few to show' and carries no figure. No row names a run or an editor."
)
