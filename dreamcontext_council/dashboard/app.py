"""The dashboard as a Starlette app, built apart from the server so tests need no port.

Routes (GET/HEAD; with the write path on, the POST routes of dashboard/write_routes.py
too; anything else is 405):
  /                       the list of debates, a page at a time (?q=, ?status=, ?page=;
                          ?evals=1 lists the debates an eval made too)
  /fragment/list          the list's rows for the same parameters, re-fetched on live updates
  /d/{id}                 one debate
  /d/{id}/fragment        the debate's live part, re-fetched on live updates; with
                          ?have=<part>:<digest>,… only the parts that changed
  /d/{id}/entry/{slug}/{n}   one whole round entry, loaded when opened (long debates)
  /d/{id}/transcript/{slug}  one persona's transcript, loaded when opened (long debates)
  /e/                     the evals under the root: questions done, council and solo accuracy
  /fragment/evals         the evals list's live part, re-fetched on live updates
  /e/{eval_id}            one eval: its settings, the method table and accuracy-vs-cost plot
                          from results.json, one row per question linking to its debate
  /e/{eval_id}/fragment   the eval page's live part, re-fetched on live updates
  /events, /events/{id}   server-sent events when files change
  /events/e/{eval_id}     server-sent events when a file of the eval or of its answers/ changes
  /events/evals           server-sent events when any eval changes or one is made
  /knowledge/{name}       a promoted knowledge doc, read-only
  /static/{name}          the dashboard's own CSS and JS
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.actions.run_state import debate_run_state
from dreamcontext_council.actions.snapshot import DebateSnapshot, load_snapshot
from dreamcontext_council.dashboard.changes import EVALS_LIST, eval_topic
from dreamcontext_council.dashboard.events import ChangeFeed
from dreamcontext_council.dashboard.index_cache import IndexCache
from dreamcontext_council.dashboard.list_verdicts import ListVerdicts
from dreamcontext_council.dashboard.write_path import WriteAccess, WriteGuard
from dreamcontext_council.dashboard.write_routes import ask_form, desk_of, write_routes
from dreamcontext_council.errors import CouncilError, FormatError, NotFoundError
from dreamcontext_council.evaluation.page import (
    EvalPage,
    build_eval_page,
    eval_html,
    eval_summaries,
    evals_html,
    open_eval,
)
from dreamcontext_council.folder import frontmatter_io
from dreamcontext_council.folder.names import check_debate_id, check_slug
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_read import inside
from dreamcontext_council.folder.storage import read_text
from dreamcontext_council.rules.conflict_markers import ConflictMarkers
from dreamcontext_council.rules.debate import bounded_round
from dreamcontext_council.views import html
from dreamcontext_council.views.contained import is_inside
from dreamcontext_council.views.debate_list import DebateList, debate_list
from dreamcontext_council.views.debate_page import (
    DebatePage,
    build_debate_page,
    is_long,
    persona_transcript,
    status_tone,
)
from dreamcontext_council.views.eval_names import eval_debates, eval_ids
from dreamcontext_council.views.positions_by_round import entry_sections
from dreamcontext_council.views.safe_markdown import render_markdown

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SAFE_METHODS = frozenset({"GET", "HEAD"})
_KNOWLEDGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,200}\.md")
_SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


class ReadOnlyGuard:
    """Refuses every method but GET and HEAD, and adds the security headers to responses;
    with `writes`, other methods go on to the write path's guard (dashboard/write_path.py)."""

    def __init__(self, app: ASGIApp, writes: bool = False) -> None:
        self.app = app
        self.writes = writes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS and not self.writes:
            response = PlainTextResponse(
                "The dashboard is read-only: change debates with the dreamcontext CLI.",
                status_code=405,
                headers={"Allow": "GET, HEAD"},
            )
            await response(scope, receive, self._with_headers(send))
            return
        await self.app(scope, receive, self._with_headers(send))

    @staticmethod
    def _with_headers(send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in _SECURITY_HEADERS if k not in names]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        return sending


def contained_snapshot(root: Root, debate_id: str) -> DebateSnapshot:
    """Load a debate only if its id is safe and every folder it reads is inside the root."""
    paths = root.debate(check_debate_id(debate_id))
    if not paths.debate_md.is_file() or not is_inside(paths.folder, root.council):
        raise NotFoundError(f"No debate {debate_id}.")
    debate = DebateFiles(root, debate_id).debate()
    for slug in debate.personas:
        folder = paths.folder / check_slug(slug)
        if folder.exists() and not is_inside(folder, paths.folder):
            raise FormatError(f"The folder of persona {slug} points outside the debate.")
    return load_snapshot(root, debate_id, around_conflicts=True)


def _debate_id(request: Request) -> str:
    try:
        return check_debate_id(str(request.path_params["debate_id"]))
    except CouncilError:
        raise HTTPException(404, "No such debate: debate ids look like council_AbC12345.") from None


def _snapshot_for(root: Root, debate_id: str) -> DebateSnapshot:
    """The debate's files; a file that is refused or does not parse gives an error card."""
    try:
        return contained_snapshot(root, debate_id)
    except NotFoundError:
        raise HTTPException(404, f"No debate {debate_id} under this root.") from None
    except ConflictMarkers as exc:  # in debate.md's frontmatter: a merge to finish, not a bug
        raise HTTPException(409, f"{debate_id} cannot be shown: {exc}") from None
    except CouncilError as exc:
        raise HTTPException(500, f"{debate_id} cannot be shown: {exc}") from None


def _page_for(root: Root, debate_id: str) -> DebatePage:
    """The debate's live page: a long debate's entries and transcripts load on demand."""
    snapshot = _snapshot_for(root, debate_id)
    try:
        return build_debate_page(snapshot, on_demand=is_long(snapshot))
    except CouncilError as exc:
        raise HTTPException(500, f"{debate_id} cannot be shown: {exc}") from None


_HAVE = re.compile(r"([a-z0-9-]{1,80}):([0-9a-f]{0,32})")


def _have(value: str) -> list[tuple[str, str]] | None:
    """`have=top:1a2b,board:3c4d`: the parts a page holds, in order; None if malformed."""
    found = []
    for item in value.split(",")[:500]:
        match = _HAVE.fullmatch(item)
        if match is None:
            return None
        found.append((match.group(1), match.group(2)))
    return found


def _eval_page(root: Root, eval_id: str) -> EvalPage:
    """The eval's page; an id that is not a plain name, or no such folder, is a 404."""
    try:
        return build_eval_page(root, eval_id)
    except CouncilError:
        raise HTTPException(404, "No such eval: eval ids look like eval-arith-1a2b3c4d.") from None


def _run_of(root: Root, entry: dict[str, Any]) -> dict[str, Any] | None:
    """A listed debate's run state as JSON (reads its run.json unless it is complete)."""
    debate_id, status = str(entry.get("id")), str(entry.get("status"))
    try:
        check_debate_id(debate_id)
    except CouncilError:
        return None
    state = debate_run_state(root.council / debate_id, debate_id, status)
    return state.to_json() if state else None


def _slug(request: Request) -> str:
    try:
        return check_slug(str(request.path_params["slug"]))
    except CouncilError:
        raise HTTPException(404, "No such persona.") from None


def create_app(
    root: Root,
    *,
    debounce: float = 0.1,
    allowed_hosts: Sequence[str] | None = None,
    write: WriteAccess | None = None,
) -> Starlette:
    """The dashboard for one `_dream_context/` root. `allowed_hosts` guards against DNS
    rebinding; `write` turns on the write path (dashboard/write_path.py), None is read-only."""
    feed = ChangeFeed(root, debounce=debounce)
    index = IndexCache(root)
    verdicts = ListVerdicts(root)

    def listing(request: Request) -> DebateList:
        params = request.query_params
        page = params.get("page", "1")
        return debate_list(
            index.entries(),
            lambda entry: _run_of(root, entry),
            query=params.get("q", "")[:200],
            status=params.get("status", ""),
            page=int(page) if page.isascii() and page.isdigit() and len(page) < 7 else 1,
            tone_of=status_tone,
            eval_debates=eval_debates(root).keys(),
            evals=params.get("evals", "") == "1",
            verdict_of=verdicts,
        )

    def list_page(request: Request) -> Response:
        return HTMLResponse(
            html.list_html(listing(request), evals=len(eval_ids(root)), ask=ask_form(request))
        )

    def evals_page(request: Request) -> Response:
        return HTMLResponse(evals_html(eval_summaries(root)))

    def evals_fragment(request: Request) -> Response:
        return HTMLResponse(evals_html(eval_summaries(root), fragment=True), headers=_no_store())

    async def evals_events(request: Request) -> Response:
        return _event_stream(feed, EVALS_LIST)

    def eval_page(request: Request) -> Response:
        page = _eval_page(root, str(request.path_params["eval_id"]))
        return HTMLResponse(eval_html(page))

    def eval_fragment(request: Request) -> Response:
        page = _eval_page(root, str(request.path_params["eval_id"]))
        return HTMLResponse(eval_html(page, fragment=True), headers=_no_store())

    async def eval_events(request: Request) -> Response:
        try:
            folder = open_eval(root, str(request.path_params["eval_id"]))
        except CouncilError:
            raise HTTPException(404, "No such eval under this root.") from None
        return _event_stream(feed, eval_topic(folder.id))

    def list_fragment(request: Request) -> Response:
        return HTMLResponse(html.list_html(listing(request), fragment=True), headers=_no_store())

    def debate_page(request: Request) -> Response:
        debate_id = _debate_id(request)
        page = _page_for(root, debate_id)
        return HTMLResponse(html.debate_html(page, desk=desk_of(request, root, debate_id)))

    def debate_fragment(request: Request) -> Response:
        """The live part; with `have`, only the parts whose digest the page lacks."""
        debate_id = _debate_id(request)
        page = _page_for(root, debate_id)
        have = _have(request.query_params.get("have", ""))
        if have:
            changed = html.changed_parts(page, have)
            if changed is not None:
                return HTMLResponse(changed, headers=_no_store() | {"X-Council-Parts": "changed"})
        return HTMLResponse(html.debate_html(page, fragment=True), headers=_no_store())

    def entry_fragment(request: Request) -> Response:
        debate_id, slug = _debate_id(request), _slug(request)
        number = bounded_round(str(request.path_params["number"]))
        if number is None:
            raise HTTPException(404, "No such round.")
        sections = entry_sections(_snapshot_for(root, debate_id), slug, number)
        if not sections:
            raise HTTPException(404, f"{slug} has no entry for round {number}.")
        return HTMLResponse(html.entry_html(sections), headers=_no_store())

    def transcript_fragment(request: Request) -> Response:
        debate_id, slug = _debate_id(request), _slug(request)
        persona = persona_transcript(_snapshot_for(root, debate_id), slug)
        if persona is None:
            raise HTTPException(404, f"No persona {slug} in {debate_id}.")
        return HTMLResponse(html.transcript_html(persona), headers=_no_store())

    async def list_events(request: Request) -> Response:
        return _event_stream(feed, None)

    async def debate_events(request: Request) -> Response:
        debate_id = _debate_id(request)
        if not root.debate(debate_id).debate_md.is_file():
            raise HTTPException(404, f"No debate {debate_id} under this root.")
        return _event_stream(feed, debate_id)

    def knowledge_page(request: Request) -> Response:
        name = str(request.path_params["name"])
        path = root.knowledge / name
        if not _KNOWLEDGE_NAME.fullmatch(name):
            raise HTTPException(404, "No such knowledge doc.")
        try:
            inside(root.knowledge, root.path)  # a `knowledge` link out of the root is not read
        except CouncilError as exc:
            raise HTTPException(500, f"{name} cannot be shown: {exc}") from None
        if not path.is_file() or not is_inside(path, root.knowledge):
            raise HTTPException(404, "No such knowledge doc.")
        text = read_text(path, within=root.knowledge)
        try:
            meta, body = frontmatter_io.parse(text, name)
        except FormatError:
            meta, body = {}, text
        source = str(meta.get("source_debate") or "")
        try:
            check_debate_id(source)
        except CouncilError:
            source = ""
        rendered: Markup = render_markdown(body)
        return HTMLResponse(html.knowledge_html(name, meta, rendered, source or None))

    def static_file(request: Request) -> Response:
        name = str(request.path_params["name"])
        if name not in html.STATIC_FILES:
            raise HTTPException(404, "No such file.")
        return Response(
            html.static_text(name),
            media_type=html.STATIC_FILES[name],
            headers={"Cache-Control": "no-cache"},
        )

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return HTMLResponse(html.error_html(exc.status_code, exc.detail), exc.status_code)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        feed.start(asyncio.get_running_loop())
        try:
            yield
        finally:
            feed.stop()

    middleware = [Middleware(ReadOnlyGuard, writes=write is not None)]
    if allowed_hosts:
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)))
    if write is not None:  # after the Host check: a rebinding name never reaches the token
        middleware.append(Middleware(WriteGuard, access=write))
    writes = write_routes(root, write, _page_for, listing) if write is not None else []
    app = Starlette(
        routes=[
            *writes,
            Route("/", list_page),
            Route("/fragment/list", list_fragment),
            Route("/d/{debate_id}", debate_page),
            Route("/d/{debate_id}/fragment", debate_fragment),
            Route("/d/{debate_id}/entry/{slug}/{number}", entry_fragment),
            Route("/d/{debate_id}/transcript/{slug}", transcript_fragment),
            Route("/e/", evals_page),
            Route("/e/{eval_id}", eval_page),
            Route("/e/{eval_id}/fragment", eval_fragment),
            Route("/fragment/evals", evals_fragment),
            Route("/events", list_events),
            Route("/events/evals", evals_events),  # before /events/{debate_id}
            Route("/events/{debate_id}", debate_events),
            Route("/events/e/{eval_id}", eval_events),
            Route("/knowledge/{name}", knowledge_page),
            Route("/static/{name}", static_file),
        ],
        middleware=middleware,
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )
    app.state.root = root
    app.state.feed = feed
    app.state.write = write
    return app


def _no_store() -> dict[str, str]:
    return {"Cache-Control": "no-store"}


def _event_stream(feed: ChangeFeed, topic: str | None) -> Response:
    return StreamingResponse(
        feed.stream(topic),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
