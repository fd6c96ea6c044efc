"""The dashboard's write path: only a same-origin form carrying the token `serve` printed
changes anything, bounded as the CLI is; a person's seat answered from the page is checked
as `report append` checks an entry, and a refusal keeps every word typed."""

from __future__ import annotations

import hashlib
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from debate_story import Chair
from markupsafe import escape
from starlette.testclient import TestClient

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.dashboard import create_app
from dreamcontext_council.dashboard.hosts import allowed_hosts
from dreamcontext_council.dashboard.write_path import COOKIE, MAX_BODY_BYTES, WriteAccess
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules import limits

TOKEN = "the-token-of-this-serve"
SAME_ORIGIN = {"sec-fetch-site": "same-origin", "origin": "null"}
ANSWER = {
    "stance": "A",
    "conviction": "70",
    "headline": "Migrate, with a rollback plan",
    "concession": "",
    "executive_summary": "Migrate now; the rollback plan covers the risk.",
    "position": "Option A, with a rollback plan.",
    "reasoning": "Redis persistence cost us two incidents this year.",
    "reactions_to_peers": "**bob**: agreed on the cost.",
    "open_questions": "How long does the backfill take?",
}


def person_debate(chair: Chair) -> str:
    """alice (a person's seat) and bob (a model) in round 1 of 3, options A/B."""
    debate_id = chair.new(personas=(), rounds=3)
    chair.ok("agent", "create", debate_id, "alice", "--model", "human", "--body", "I am alice.")
    chair.seat(debate_id, "bob")
    chair.ok("round", "start", debate_id, "1")
    return debate_id


def digest(folder: Path) -> str:
    """Every file under the folder, names and bytes: what `nothing written` means."""
    hashed = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            hashed.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return hashed.hexdigest()


@pytest.fixture
def client(root: Root) -> Iterator[TestClient]:
    app = create_app(root, allowed_hosts=allowed_hosts("127.0.0.1"), write=WriteAccess(TOKEN))
    with TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False) as test:
        yield test


@pytest.fixture
def debate(chair: Chair) -> str:
    return person_debate(chair)


def as_user(client: TestClient, path: str, cookie: str = TOKEN) -> str:
    """A page asked with the cookie the printed address set (or another value)."""
    client.cookies.set(COOKIE, cookie)
    try:
        return client.get(path).text
    finally:
        client.cookies.clear()


def post(client: TestClient, path: str, form: dict[str, str], **headers: str):  # type: ignore[no-untyped-def]
    return client.post(path, data=form, headers={**SAME_ORIGIN, **headers})


def test_the_printed_address_keeps_the_token_in_a_strict_cookie(client: TestClient) -> None:
    response = client.get(f"/?token={TOKEN}&q=redis")
    assert response.status_code == 303
    assert response.headers["location"] == "/?q=redis"  # the token leaves the address bar
    cookie = response.headers["set-cookie"]
    assert f"{COOKIE}={TOKEN}" in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    page = as_user(client, "/")
    assert 'name="topic"' in page and TOKEN in page


def test_a_page_without_the_cookie_carries_no_token_and_no_form(
    client: TestClient, debate: str
) -> None:
    wrong = client.get("/?token=guessed")
    assert "set-cookie" not in wrong.headers
    for path in ("/", f"/d/{debate}"):
        page = as_user(client, path, "guessed")
        assert TOKEN not in page and 'name="topic"' not in page and 'name="reasoning"' not in page


@pytest.mark.parametrize(
    ("headers", "form", "status"),
    [
        ({"sec-fetch-site": "cross-site", "origin": "https://evil.example"}, {}, 403),
        ({"sec-fetch-site": "same-site"}, {}, 403),
        ({"origin": "https://evil.example", "sec-fetch-site": ""}, {}, 403),
        ({"origin": "null", "sec-fetch-site": ""}, {}, 403),  # a sandboxed frame, say
        ({}, {"token": ""}, 403),
        ({}, {"token": "not-the-token"}, 403),
        ({"host": "rebound.example"}, {}, 400),
        ({}, {"reasoning": "x" * (limits.MAX_ENTRY_CHARS + 1)}, 413),
        ({}, {"headline": "h" * (limits.MAX_HEADLINE_CHARS + 1)}, 413),
    ],
    ids=[
        "cross-site",
        "same-site",
        "other-origin",
        "null-origin-alone",
        "no-token",
        "wrong-token",
        "rebinding-host",
        "oversized-section",
        "oversized-headline",
    ],
)
def test_a_refused_post_writes_nothing(
    client: TestClient,
    root: Root,
    debate: str,
    headers: dict[str, str],
    form: dict[str, str],
    status: int,
) -> None:
    before = digest(root.path)
    sent = {**SAME_ORIGIN, **headers}
    sent = {name: value for name, value in sent.items() if value}
    response = client.post(
        f"/d/{debate}/seat/alice", data={"token": TOKEN, **ANSWER, **form}, headers=sent
    )
    assert response.status_code == status, response.text
    assert digest(root.path) == before
    assert "alice" not in DebateFiles(root, debate).verdicts().round(1)


def test_a_body_over_the_bound_is_refused_before_it_is_read(
    client: TestClient, root: Root, debate: str
) -> None:
    before = digest(root.path)
    body = b"token=" + TOKEN.encode() + b"&reasoning=" + b"x" * MAX_BODY_BYTES
    response = client.post(
        f"/d/{debate}/seat/alice",
        content=body,
        headers={**SAME_ORIGIN, "content-type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 413
    assert digest(root.path) == before


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH"])
def test_only_post_writes_and_get_never_does(
    client: TestClient, root: Root, debate: str, method: str
) -> None:
    before = digest(root.path)
    client.cookies.set(COOKIE, TOKEN)
    assert client.get(f"/d/{debate}/seat/alice").status_code == 405
    client.cookies.clear()
    assert client.request(method, f"/d/{debate}/stop").status_code == 405
    assert post(client, "/", {"token": TOKEN}).status_code == 405  # not a write route
    assert digest(root.path) == before


def test_the_token_may_come_in_a_header(client: TestClient, root: Root, debate: str) -> None:
    response = client.post(
        f"/d/{debate}/seat/alice", data=ANSWER, headers={"x-council-token": TOKEN}
    )
    assert response.status_code == 303
    assert DebateFiles(root, debate).verdicts().round(1)["alice"].stance == "A"


def test_the_seat_shows_the_round_context_and_records_like_report_append(
    client: TestClient, chair: Chair, root: Root, debate: str
) -> None:
    page = as_user(client, f"/d/{debate}")
    context = chair.ok("round-context", debate, "alice").rstrip("\n")
    assert str(escape(context)) in page  # the same text, the answer contract included
    for name in ("stance", "conviction", "headline", "executive_summary", "reasoning"):
        assert f'name="{name}"' in page
    assert 'name="cross_examination"' not in page  # round 1

    response = post(client, f"/d/{debate}/seat/alice", {"token": TOKEN, **ANSWER})
    assert response.status_code == 303
    files = DebateFiles(root, debate)
    verdict = files.verdicts().round(1)["alice"]
    assert (verdict.stance, verdict.conviction) == ("A", 70)
    [recorded] = [e for e in files.entries("alice") if e.round == 1]
    assert ANSWER["reasoning"] in recorded.section("Reasoning")
    # The seat is answered: the page no longer offers its form.
    assert 'name="reasoning"' not in as_user(client, f"/d/{debate}")


def test_a_missing_section_is_refused_beside_its_field_with_every_word_kept(
    client: TestClient, root: Root, debate: str
) -> None:
    before = digest(root.path)
    typed = {**ANSWER, "reasoning": "", "headline": 'Migrate <now> & "fast"'}
    response = post(client, f"/d/{debate}/seat/alice", {"token": TOKEN, **typed})
    assert response.status_code == 400
    assert digest(root.path) == before
    page = response.text
    label = page[page.index('id="alice-reasoning"') :]
    label = label[: label.index("</label>")]
    assert "refusal" in label and "### Reasoning" in label
    for name, value in typed.items():
        if value:
            assert str(escape(value)) in page, name


def test_a_stance_that_is_no_option_is_refused_beside_the_stance(
    client: TestClient, debate: str
) -> None:
    response = post(client, f"/d/{debate}/seat/alice", {"token": TOKEN, **ANSWER, "stance": "Z"})
    assert response.status_code == 400
    label = response.text[response.text.index('id="alice-stance"') :]
    assert "not an option" in label[: label.index("</label>")]


def test_read_only_refuses_every_post(root: Root, debate: str) -> None:
    with TestClient(create_app(root), base_url="http://127.0.0.1") as test:
        before = digest(root.path)
        response = test.post(
            f"/d/{debate}/seat/alice", data={"token": TOKEN, **ANSWER}, headers=SAME_ORIGIN
        )
        assert response.status_code == 405
        assert 'name="topic"' not in as_user(test, "/")
        assert digest(root.path) == before


def test_serve_prints_its_token_address_and_read_only_serves_no_forms(
    reference_root: Root, tmp_path: Path
) -> None:
    from debate_story import spawn

    from .test_watch_and_serve import Lines, stop

    for flags in ([], ["--read-only"]):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        process = spawn(["serve", "--port", str(port), *flags], reference_root.path, tmp_path)
        try:
            line = Lines(process).until(lambda text: "http://" in text)
            found = re.search(r"http://127\.0\.0\.1:\d+/\?token=([A-Za-z0-9_-]{43})", line)
            assert (found is not None) == (not flags), line
            url = f"http://127.0.0.1:{port}/"
            deadline = time.monotonic() + 10
            while True:
                try:
                    first = httpx.get(f"{url}?token={found.group(1) if found else 'x'}", timeout=2)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
            cookie = first.headers.get("set-cookie", "")
            assert ("council_token=" in cookie) == (not flags)
            posted = httpx.post(url + "ask", data={"token": found.group(1) if found else "x"})
            assert posted.status_code == (400 if not flags else 405)  # no topic; read-only
        finally:
            code, err = stop(process)
        assert code == 0, err
