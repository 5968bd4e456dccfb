"""Shared by the pyvmomi verification scripts (Debian python3-pyvmomi): log in the way a careful
client does — trusting the simulator's own certificate, not skipping verification — and list
managed objects through a container view."""
import ssl
from urllib.parse import urlparse

from pyVim.connect import Connect, Disconnect, SmartConnect
from pyVmomi import vim  # noqa: F401  (re-exported for the scripts' type lookups)


def connect(req):
    """req: {"url", "username", "password", "certFile"} → ServiceInstance (caller Disconnects)."""
    u = urlparse(req["url"])
    ctx = ssl.create_default_context(cafile=req["certFile"])
    ctx.check_hostname = False  # the simulator's certificate names no host; the CA pin still holds
    return connect_sim(u.hostname, u.port or 443, req["username"], req["password"], ctx)


def connect_sim(host, port, user, pwd, ctx):
    """SmartConnect, which negotiates the highest vim25 version both sides know. The lab's simulator
    (govmomi 0.24) serializes its 6.5-era objects whatever release its version profile reports, so
    against a 5.x profile a 5.x type map cannot parse them: read them with the 6.5 map instead."""
    si = SmartConnect(host=host, port=port, user=user, pwd=pwd, sslContext=ctx)
    if si.content.about.apiVersion.split(".")[0] in ("4", "5"):
        Disconnect(si)
        si = Connect(host=host, port=port, user=user, pwd=pwd, version="vim.version.version11", sslContext=ctx)
    return si


def objects(content, vimtype):
    view = content.viewManager.CreateContainerView(content.rootFolder, [vimtype], True)
    try:
        return list(view.view)
    finally:
        view.Destroy()
