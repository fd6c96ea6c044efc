"""Which addresses the dashboard may listen on, and which Host headers it then answers.

On a loopback address only this machine can connect, but a page on any web site can still
reach it through DNS rebinding (its own name, re-pointed at 127.0.0.1): the Host header is
then the attacker's name, so only requests naming the bound address or `localhost` are
served. Any other address lets other machines in, so it takes `--allow-remote`.
"""

from __future__ import annotations

import ipaddress

from dreamcontext_council.errors import UsageError

LOCAL_NAME = "localhost"


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """True for `localhost` and any loopback address: 127.0.0.0/8, ::1, ::ffff:127.x.y.z."""
    if host.lower() == LOCAL_NAME:
        return True
    address = _address(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address is not None and address.is_loopback


def allowed_hosts(host: str) -> list[str] | None:
    """The Host header names served on `host`; None (any) for a non-loopback address."""
    if not is_loopback(host):
        return None
    address = _address(host)
    if address is None:  # localhost: the server binds it as 127.0.0.1
        return ["127.0.0.1", LOCAL_NAME]
    if address.version == 4:
        return [address.compressed, LOCAL_NAME]
    # Both spellings a browser may send: as given (::ffff:127.0.0.1) and compressed.
    spellings = dict.fromkeys([f"[{host.strip('[]').lower()}]", f"[{address.compressed}]"])
    return [*spellings, LOCAL_NAME]


def check_bind(host: str, allow_remote: bool) -> str | None:
    """The warning to print before listening on `host`, or None on loopback.

    Raises UsageError for a non-loopback address without `allow_remote`.
    """
    if is_loopback(host):
        return None
    if not allow_remote:
        raise UsageError(
            f"--host {host} lets other machines read every debate under this root; "
            "pass --allow-remote to serve it there, or keep the default 127.0.0.1."
        )
    return (
        f"the dashboard on {host} is reachable from other machines, with no login and "
        "any Host header; anyone who can connect reads every debate under this root."
    )
