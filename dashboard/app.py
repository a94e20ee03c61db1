"""The runrecord dashboard: page configuration, navigation by role, and the sign-in in place of a page the
viewer may not see yet; nothing else."""

import streamlit as st

from dashboard import access, navigation
from dashboard.components import account, sign_in_gate

st.set_page_config(
    page_title=navigation.PRODUCT,
    page_icon=navigation.FAVICON,
    layout="wide",
    menu_items={"About": "runrecord: what the AI chat of a TYPO3 backend did, and what became of it."},
)
viewer = access.viewer()
account.show(viewer, key="account")
registered = navigation.pages(viewer)
page = st.navigation(registered)
st.set_page_config(page_title=navigation.tab_title(page))
if sign_in_gate.show(viewer, page, registered, key="gate"):
    page.run()
