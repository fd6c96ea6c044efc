"""The dashboard's write routes: ask, answer a seat, stop and resume a run.

Each runs only after the write path's guard passed the request (dashboard/write_path.py);
a refusal of what was typed comes back on the same page with the text kept, never as a
half-written change.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from dreamcontext_council.dashboard import ask
from dreamcontext_council.dashboard.desk import Desk, desk_for
from dreamcontext_council.dashboard.run_process import start_run, stop_run
from dreamcontext_council.dashboard.seat_form import read_values, record_seat
from dreamcontext_council.dashboard.write_path import WriteAccess, form_of, may_write
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.folder.names import check_debate_id, check_slug
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.views import html
from dreamcontext_council.views.eval_names import eval_ids


def ask_form(
    request: Request, values: dict[str, str] | None = None, problem: str | None = None
) -> ask.AskForm | None:
    """The list page's ask form, for a page asked with the token's cookie."""
    if not may_write(request):
        return None
    access: WriteAccess = request.app.state.write
    return ask.AskForm(access.token, values or {}, problem)


def desk_of(request: Request, root: Root, debate_id: str) -> Desk | None:
    """The debate page's desk, for a page asked with the token's cookie."""
    if not may_write(request):
        return None
    access: WriteAccess = request.app.state.write
    return desk_for(root, debate_id, access.token)


def write_routes(root: Root, access: WriteAccess, page_for: Any, listing: Any) -> list[Route]:
    """The routes of the write path; `page_for(root, id)` builds a debate's page and
    `listing(request)` the list, as the app's own pages do."""

    def debate_id_of(request: Request) -> str:
        try:
            return check_debate_id(str(request.path_params["debate_id"]))
        except CouncilError:
            raise HTTPException(404, "No such debate.") from None

    def debate_page(request: Request, debate_id: str, desk: Desk, status: int) -> Response:
        page = page_for(root, debate_id)
        return HTMLResponse(html.debate_html(page, desk=desk), status_code=status)

    async def ask_post(request: Request) -> Response:
        values = ask.read_form(form_of(request))
        try:
            args = ask.run_arguments(root, access, values)
        except CouncilError as problem:
            return _list_again(request, values, str(problem))
        started = await start_run(root, args, access.run_env())
        if started.debate_id is None:
            return _list_again(request, values, started.error or "The run did not start.")
        return RedirectResponse(f"/d/{started.debate_id}", status_code=303)

    def _list_again(request: Request, values: dict[str, str], problem: str) -> Response:
        form = ask.AskForm(access.token, values, problem)
        return HTMLResponse(
            html.list_html(listing(request), evals=len(eval_ids(root)), ask=form), status_code=400
        )

    async def seat_post(request: Request) -> Response:
        debate_id = debate_id_of(request)
        try:
            slug = check_slug(str(request.path_params["slug"]))
        except CouncilError:
            raise HTTPException(404, "No such seat.") from None
        values = read_values(form_of(request))
        try:
            seat = record_seat(root, debate_id, slug, values)
        except CouncilError as problem:
            desk = desk_for(root, debate_id, access.token, problem=str(problem))
            return debate_page(request, debate_id, desk, 409)
        if seat is None:
            return RedirectResponse(f"/d/{debate_id}#desk", status_code=303)
        desk = desk_for(root, debate_id, access.token, seat=seat)
        return debate_page(request, debate_id, desk, 400)

    def stop_post(request: Request) -> Response:
        debate_id = debate_id_of(request)
        said = stop_run(root, debate_id)
        desk = desk_for(root, debate_id, access.token, problem=said)
        return debate_page(request, debate_id, desk, 200)

    async def resume_post(request: Request) -> Response:
        debate_id = debate_id_of(request)
        if not root.debate(debate_id).debate_md.is_file():
            raise HTTPException(404, f"No debate {debate_id} under this root.")
        args = [debate_id, *(["--base-url", access.base_url] if access.base_url else [])]
        started = await start_run(root, args, access.run_env(), resumed=debate_id)
        if started.error is not None:
            desk = desk_for(root, debate_id, access.token, problem=started.error)
            return debate_page(request, debate_id, desk, 400)
        return RedirectResponse(f"/d/{debate_id}", status_code=303)

    def desk_fragment(request: Request) -> Response:
        debate_id = debate_id_of(request)
        desk = desk_of(request, root, debate_id)
        if desk is None:
            raise HTTPException(403, "Open the address `serve` printed to answer from here.")
        return HTMLResponse(html.desk_html(desk), headers={"Cache-Control": "no-store"})

    return [
        Route("/ask", ask_post, methods=["POST"]),
        Route("/d/{debate_id}/seat/{slug}", seat_post, methods=["POST"]),
        Route("/d/{debate_id}/stop", stop_post, methods=["POST"]),
        Route("/d/{debate_id}/resume", resume_post, methods=["POST"]),
        Route("/d/{debate_id}/desk", desk_fragment),
    ]
