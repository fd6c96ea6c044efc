"""Who may change anything through the dashboard: the write path's rules, in one place.

`serve` makes a secret token at each start and prints it in its address
(`http://127.0.0.1:PORT/?token=…`). Opening that address keeps the token in a cookie
(`SameSite=Strict`, `HttpOnly`) and sends the browser on to the same page without it; a
page asked with that cookie carries the token in its forms. A request that changes
anything is a POST to one of the write routes and passes, in this order:

1. the Host check (`hosts.allowed_hosts`, applied by the app: a rebinding name is a 400);
2. the origin policy: `Sec-Fetch-Site`, when the browser sends it, is `same-origin`; an
   `Origin`, when sent, is this server's own (`null` only beside `Sec-Fetch-Site:
   same-origin`: the pages send `Referrer-Policy: no-referrer`, and Chromium then posts a
   page's own forms with `Origin: null`); anything else is a 403;
3. the size: a body over MAX_BODY_BYTES, or without a length, is refused before it is
   read (413, 411); it is read up to that bound, parsed as a plain urlencoded form of at
   most MAX_FIELDS distinct fields, UTF-8 (else 400);
4. the token, from the `token` field or the `X-Council-Token` header, compared in constant
   time (else 403).

Only then does the route run; each field is bounded by rules/limits.py before it is read
(`bounded`, 413). Every other method, and a POST to any other path, is a 405; GET never
writes. `serve --read-only` (and any address other machines can reach) keeps the old
guard: GET and HEAD only.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

TOKEN_FIELD = "token"
TOKEN_HEADER = "x-council-token"
COOKIE = "council_token"
# A round entry at its longest (rules/limits.MAX_ENTRY_CHARS), every character four UTF-8
# bytes and each byte percent-encoded, with room for the other fields.
MAX_BODY_BYTES = 3 * 1024 * 1024
MAX_FIELDS = 32
FORM_TYPE = "application/x-www-form-urlencoded"
SAFE_METHODS = frozenset({"GET", "HEAD"})
WRITE_ROUTES = re.compile(r"/ask|/d/[A-Za-z0-9_]{1,64}/(?:stop|resume|seat/[a-z0-9-]{1,64})")


@dataclass(frozen=True)
class WriteAccess:
    """The write path of one `serve`: its token, and what its pages may name.

    `allow_commands` are the `command:` programs a roster named from the page may run
    (`serve --allow-command`); `base_url` the server URL every run the page starts uses
    (`serve --base-url`). A page names neither otherwise. The runs it starts get `env`
    (None: the server's own environment, as `council run` in the same shell would)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    allow_commands: frozenset[str] = frozenset()
    base_url: str | None = None
    env: Mapping[str, str] | None = None

    def run_env(self) -> Mapping[str, str]:
        """The environment a run started from the page gets."""
        return self.env if self.env is not None else os.environ

    def holds(self, given: str | None) -> bool:
        """Whether `given` is this server's token (compared in constant time)."""
        if not given:
            return False
        return hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode())

    def address(self, url: str) -> str:
        """The address `serve` prints: the root URL with the token."""
        return f"{url}?{urlencode({TOKEN_FIELD: self.token})}"

    @staticmethod
    def is_write_path(path: str) -> bool:
        """The routes a POST may go to: ask, and a debate's stop, resume and seats."""
        return WRITE_ROUTES.fullmatch(path) is not None


def may_write(request: Request) -> bool:
    """Whether the page asked for may carry the token in its forms: the write path is on
    and the request came with the token's cookie."""
    access: WriteAccess | None = getattr(request.app.state, "write", None)
    return access is not None and access.holds(request.cookies.get(COOKIE))


def form_of(request: Request) -> Mapping[str, str]:
    """The form the guard read and checked for this POST."""
    found: Mapping[str, str] = request.scope.get("council.form", {})
    return found


def bounded(form: Mapping[str, str], name: str, limit: int, what: str) -> str:
    """A form field (empty when absent), refused with a 413 past `limit` characters."""
    value = form.get(name, "")
    if len(value) > limit:
        raise HTTPException(
            413,
            f"{what} is {len(value):,} characters long; the limit is {limit:,}. Shorten it "
            "and send the form again (nothing was written).",
        )
    return value


class WriteGuard:
    """The app's layer after the Host check when the write path is on: GET and HEAD as
    before, a POST to a write route only once it passed the checks above, anything else a
    405. (The security headers are added by the layer outside, the app's ReadOnlyGuard.)"""

    def __init__(self, app: ASGIApp, access: WriteAccess) -> None:
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        sending = send
        method, path = scope["method"], scope["path"]
        if method in SAFE_METHODS:
            request = Request(scope)
            given = request.query_params.get(TOKEN_FIELD)
            if given is not None and method == "GET":
                await self._keep_token(request, given)(scope, receive, sending)
                return
            await self.app(scope, receive, sending)
            return
        if method != "POST" or not self.access.is_write_path(path):
            response: Response = PlainTextResponse(
                "Only the dashboard's own forms change anything here (POST to /ask or a "
                "debate's action); everything else is read-only.",
                status_code=405,
                headers={
                    "Allow": "GET, HEAD, POST" if self.access.is_write_path(path) else "GET, HEAD"
                },
            )
            await response(scope, receive, sending)
            return
        refused = self._refused(Request(scope))
        if refused is not None:
            await refused(scope, receive, sending)
            return
        body, problem = await _read_body(scope, receive)
        if problem is not None:
            await problem(scope, receive, sending)
            return
        form, problem = _parse(body)
        if problem is not None:
            await problem(scope, receive, sending)
            return
        headers = dict(scope.get("headers", []))
        given = form.get(TOKEN_FIELD) or headers.get(TOKEN_HEADER.encode(), b"").decode("latin-1")
        if not self.access.holds(given):
            await _refuse(
                403,
                "This request does not carry the dashboard's token: open the address "
                "`dreamcontext council serve` printed (it ends with ?token=…) and use its forms.",
            )(scope, receive, sending)
            return
        scope["council.form"] = form

        async def replayed() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        await self.app(scope, replayed, sending)

    def _keep_token(self, request: Request, given: str) -> Response:
        """`?token=…`: the cookie set and the same page without the token in its address;
        a wrong token changes nothing (the page shows, without its forms)."""
        query = [(k, v) for k, v in request.query_params.multi_items() if k != TOKEN_FIELD]
        target = request.url.path + (f"?{urlencode(query)}" if query else "")
        response = RedirectResponse(target, status_code=303)
        if self.access.holds(given):
            response.set_cookie(
                COOKIE, self.access.token, httponly=True, samesite="strict", path="/"
            )
        return response

    def _refused(self, request: Request) -> Response | None:
        """The origin policy and the declared size, before any of the body is read."""
        site = request.headers.get("sec-fetch-site")
        origin = request.headers.get("origin")
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if site is not None and site != "same-origin":
            return _refuse(403, f"A form from another site ({site}) may not change anything here.")
        if origin is not None and origin != own and not (origin == "null" and site is not None):
            return _refuse(403, "A form from another origin may not change anything here.")
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != FORM_TYPE:
            return _refuse(415, f"Send the form as {FORM_TYPE}.")
        length = request.headers.get("content-length")
        if length is None or not length.isdigit():
            return _refuse(411, "Send the form with a Content-Length.")
        if int(length) > MAX_BODY_BYTES:
            return _too_big()
        return None


def _refuse(status: int, message: str) -> Response:
    return PlainTextResponse(message, status_code=status, headers={"Cache-Control": "no-store"})


def _too_big() -> Response:
    return _refuse(
        413,
        f"The form is over {MAX_BODY_BYTES // 1024 // 1024} MiB; nothing was written. "
        "Shorten the text and send it again.",
    )


async def _read_body(scope: Scope, receive: Receive) -> tuple[bytes, Response | None]:
    """The body, read up to MAX_BODY_BYTES (a client that sends more than it declared is
    cut off there)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", _refuse(400, "The request ended before its body.")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return b"", _too_big()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), None


def _parse(body: bytes) -> tuple[dict[str, str], Response | None]:
    """The urlencoded form as one value per name; a repeated name, too many fields, or a
    body that is not UTF-8 is a 400."""
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(
            text,
            keep_blank_values=True,
            strict_parsing=False,
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_FIELDS,
        )
    except (UnicodeDecodeError, ValueError):
        return {}, _refuse(400, "The form is not UTF-8 text, or has too many fields.")
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            return {}, _refuse(400, f"The form names {name[:40]!r} twice.")
        form[name] = value
    return form, None
