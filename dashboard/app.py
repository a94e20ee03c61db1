"""The runrecord dashboard: page configuration and navigation by role, nothing else."""

import streamlit as st

from dashboard import access, navigation
from dashboard.components import account

st.set_page_config(page_title="runrecord", layout="wide")
viewer = access.viewer()
account.show(viewer, key="account")
st.navigation(navigation.pages(viewer)).run()
