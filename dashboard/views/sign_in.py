"""Sign in: OIDC when configured, else the administrator password (the product pages need none)."""

import streamlit as st

from dashboard import access
from dashboard.components import password_form

st.title("Sign in")
current = access.viewer()
if current.method is access.Method.OIDC:
    st.write("This dashboard asks everyone to sign in with the organisation's identity provider.")
    providers = access.oidc_providers()
    for provider in providers:
        if st.button(f"Sign in with {provider}", key=f"oidc_login_{provider}", type="primary"):
            st.login(provider)
    if not providers and st.button("Sign in with the identity provider", key="oidc_login", type="primary"):
        st.login()
    st.stop()

if current.is_administrator:
    st.success("You are signed in as an administrator.")
    st.stop()
st.write(
    "Rates and Runs are open on this machine. The Conversation and Health pages show transcripts and are for "
    "administrators: sign in with the administrator password (`runrecord demo` and `runrecord dashboard` "
    "print "
    "one for each start unless RUNRECORD_ADMIN_PASSWORD_HASH is set)."
)
result = password_form.show(key="password")
if result is access.SignInResult.SIGNED_IN:
    st.rerun()
elif result is access.SignInResult.WRONG_PASSWORD:
    st.error("That is not the administrator password.")
elif result is not None:
    st.error(
        f"Cannot sign in: {result.value}. Set RUNRECORD_ADMIN_PASSWORD_HASH (`runrecord hash-password`)."
    )
