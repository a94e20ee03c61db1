"""The runrecord dashboard: page configuration and navigation, nothing else."""

from pathlib import Path

import streamlit as st

PAGES = Path(__file__).parent / "pages"

st.set_page_config(page_title="runrecord", layout="wide")
navigation = st.navigation([st.Page(PAGES / "tables.py", title="Tables", icon=":material/table:")])
navigation.run()
