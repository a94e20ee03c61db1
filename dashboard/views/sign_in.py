"""Sign in: OIDC when configured, else the administrator password (the product pages need none)."""

from dashboard import access
from dashboard.components import sign_in

sign_in.show(access.viewer(), for_page=None, key="password")
