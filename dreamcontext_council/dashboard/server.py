"""Run the dashboard: bind the socket, build the app, and start uvicorn last."""

from __future__ import annotations

import errno
import socket
import threading
import webbrowser
from collections.abc import Callable

import uvicorn

from dreamcontext_council.dashboard.app import create_app
from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.dashboard.hosts import allowed_hosts, check_bind, is_loopback
from dreamcontext_council.dashboard.write_path import WriteAccess
from dreamcontext_council.errors import CouncilError, UsageError
from dreamcontext_council.folder.paths import Root

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


class DashboardServer(uvicorn.Server):
    """uvicorn, but open event streams end first so shutdown does not wait on them."""

    def __init__(self, config: uvicorn.Config, feed: ChangeFeed) -> None:
        super().__init__(config)
        self.feed = feed

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.feed.close_streams()
        await super().shutdown(sockets)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, or a CouncilError that says which port to try instead."""
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CouncilError(
                f"Port {port} on {host} is already in use; pass --port with another number."
            ) from None
        raise UsageError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}).") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def build_server(
    root: Root, host: str, sock: socket.socket, write: WriteAccess | None = None
) -> DashboardServer:
    """The app and its uvicorn server, ready to run on an already bound socket; `write`
    turns on the write path (None: read-only)."""
    # On loopback only local names may reach the app (a rebinding DNS name may not).
    app = create_app(root, allowed_hosts=allowed_hosts(host), write=write)
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    return DashboardServer(config, app.state.feed)


def serve(
    root: Root,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    open_browser: bool = False,
    announce: Callable[[str], None] | None = None,
    *,
    allow_remote: bool = False,
    warn: Callable[[str], None] | None = None,
    write: WriteAccess | None = None,
) -> None:
    """Serve the dashboard until interrupted; `announce` gets the URL once it is bound
    (with the write path's token, when `write` is given).

    A non-loopback `host` needs `allow_remote` (else UsageError) and is reported to `warn`;
    it is served read-only: the token would cross the network in the clear.
    """
    warning = check_bind(host, allow_remote)
    if warning is not None and warn is not None:
        warn(warning)
    if write is not None and not is_loopback(host):
        write = None
        if warn is not None:
            warn(f"the dashboard on {host} is read-only: asking and answering need loopback.")
    sock = bind(host, port)
    url = url_for(host, sock.getsockname()[1])
    server = build_server(root, host, sock, write)
    if announce is not None:
        announce(write.address(url) if write is not None else url)
    if open_browser:
        opened = write.address(url) if write is not None else url
        threading.Timer(0.5, webbrowser.open, args=(opened,)).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass  # uvicorn re-raises the Ctrl-C it handled; stopping is the normal way out
    finally:
        sock.close()
