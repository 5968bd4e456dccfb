"""Shared by the pyvmomi verification scripts (Debian python3-pyvmomi): log in the way a careful
client does — trusting the simulator's own certificate, not skipping verification — and list
managed objects through a container view."""
import ssl
from urllib.parse import urlparse

from pyVim.connect import SmartConnect
from pyVmomi import vim  # noqa: F401  (re-exported for the scripts' type lookups)


def connect(req):
    """req: {"url", "username", "password", "certFile"} → ServiceInstance (caller Disconnects)."""
    u = urlparse(req["url"])
    ctx = ssl.create_default_context(cafile=req["certFile"])
    ctx.check_hostname = False  # the simulator's certificate names no host; the CA pin still holds
    return SmartConnect(host=u.hostname, port=u.port or 443, user=req["username"], pwd=req["password"], sslContext=ctx)


def objects(content, vimtype):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        return list(view.view)
    finally:
        view.Destroy()
