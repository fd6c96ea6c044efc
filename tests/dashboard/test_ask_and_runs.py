"""Asking from the list page starts `council run` as a real process of its own; a person's
seat is answered from the debate page; a run is stopped and resumed from there. The runs
use the scripted provider (no key in their environment)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from offline import clean_environment
from starlette.testclient import TestClient

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.dashboard import create_app
from dreamcontext_council.dashboard.ask import run_arguments
from dreamcontext_council.dashboard.hosts import allowed_hosts
from dreamcontext_council.dashboard.write_path import WriteAccess
from dreamcontext_council.errors import ConsentRequired
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.run_record import read_run_record

from .conftest import end_runs

TOKEN = "ask-token"
SAME_ORIGIN = {"sec-fetch-site": "same-origin", "origin": "http://127.0.0.1:8765"}
TOPIC = "Should we migrate the session store to Postgres?"
OPTIONS = "A=Migrate now\nB=Stay on Redis"
ANSWER = {
    "stance": "A",
    "conviction": "65",
    "headline": "Migrate with a rollback plan",
    "executive_summary": "Migrate; keep Redis warm for a week.",
    "position": "Option A.",
    "reasoning": "Two persistence incidents this year.",
    "reactions_to_peers": "None yet.",
    "open_questions": "The backfill's length.",
}
COMMAND = "python3 -c 'print(1)'"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "_dream_context").mkdir(parents=True)
    return folder


def access(tmp_path: Path, **more: object) -> WriteAccess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return WriteAccess(TOKEN, env=clean_environment(os.environ, home), **more)  # type: ignore[arg-type]


@pytest.fixture
def client(project: Path, tmp_path: Path) -> Iterator[TestClient]:
    root = Root(project / "_dream_context")
    app = create_app(root, allowed_hosts=allowed_hosts("127.0.0.1"), write=access(tmp_path))
    try:
        with TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False) as test:
            yield test
    finally:
        end_runs(root)


def ask(client: TestClient, **fields: str):  # type: ignore[no-untyped-def]
    form = {"token": TOKEN, "topic": TOPIC, "options": OPTIONS, "rounds": "2", **fields}
    return client.post("/ask", data=form, headers=SAME_ORIGIN)


def until(check, what: str, limit: float = 180.0):  # type: ignore[no-untyped-def]
    """Wait for `check()` to be true (a run is another process); fail naming `what`."""
    deadline = time.monotonic() + limit
    while not (found := check()):
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.1)
    return found


def status(root: Root, debate_id: str) -> str:
    return str(DebateFiles(root, debate_id).debate().status)


def debates(project: Path) -> list[str]:
    council = project / "_dream_context" / "council"
    return sorted(p.name for p in council.iterdir() if p.is_dir()) if council.is_dir() else []


def test_asking_starts_council_run_and_the_page_follows_it(
    client: TestClient, project: Path
) -> None:
    response = ask(client)
    assert response.status_code == 303, response.text
    debate_id = response.headers["location"].removeprefix("/d/")
    assert debates(project) == [debate_id]
    root = Root(project / "_dream_context")
    until(lambda: status(root, debate_id) == "complete", "the asked debate completing")
    files = DebateFiles(root, debate_id)
    assert [o["key"] for o in files.debate().options] == ["A", "B"]
    assert files.debate().rounds_planned == 2
    assert (files.paths.folder / "final-report.md").is_file()


def test_a_preflight_refusal_shows_on_the_form_with_the_text_kept(
    client: TestClient, project: Path
) -> None:
    topic = "Should we adopt the attached proposal?"
    response = ask(client, topic=topic)
    assert response.status_code == 400
    assert "cannot be debated as written" in response.text
    assert topic in response.text and "Stay on Redis" in response.text
    assert debates(project) == []


def test_a_page_names_no_command_model_unless_serve_allowed_it(
    client: TestClient, project: Path, tmp_path: Path
) -> None:
    roster = [
        {"slug": "local", "model": f"command:{COMMAND}", "body": "You are local."},
        {"slug": "other", "body": "You are other."},
    ]
    (project / "roster.json").write_text(json.dumps(roster), encoding="utf-8")
    response = ask(client, personas="roster.json")
    assert response.status_code == 400
    assert "has not allowed" in response.text and "roster.json" in response.text
    assert debates(project) == []
    root = Root(project / "_dream_context")
    with pytest.raises(ConsentRequired):
        run_arguments(root, access(tmp_path), {"topic": TOPIC, "personas": "roster.json"})
    allowed = access(tmp_path, allow_commands=frozenset({COMMAND}))
    args = run_arguments(root, allowed, {"topic": TOPIC, "personas": "roster.json"})
    assert args[args.index("--personas") + 1] == str((project / "roster.json").resolve())
    outside = tmp_path / "elsewhere.json"
    outside.write_text(json.dumps(roster), encoding="utf-8")
    response = ask(client, personas=str(outside))
    assert response.status_code == 400 and "not a file inside the project" in response.text


def test_a_seat_taken_from_the_page_is_answered_there_stopped_and_resumed(
    client: TestClient, project: Path
) -> None:
    root = Root(project / "_dream_context")
    response = ask(client, human="alice", rounds="1")
    assert response.status_code == 303, response.text
    debate_id = response.headers["location"].removeprefix("/d/")
    folder = root.council / debate_id
    client.cookies.set("council_token", TOKEN)
    until(lambda: 'name="reasoning"' in client.get(f"/d/{debate_id}").text, "alice's form")

    stopped = client.post(f"/d/{debate_id}/stop", data={"token": TOKEN}, headers=SAME_ORIGIN)
    assert "Asked the run" in stopped.text
    record = until(
        lambda: (r := read_run_record(folder)) is not None and r.stopped_reason and r,
        "the run recording its stop",
    )
    assert (
        "interrupted" in record.stopped_reason.lower() or "ctrl-c" in record.stopped_reason.lower()
    )

    resumed = client.post(f"/d/{debate_id}/resume", data={"token": TOKEN}, headers=SAME_ORIGIN)
    assert resumed.status_code == 303, resumed.text
    until(lambda: 'id="stop"' in client.get(f"/d/{debate_id}").text, "the resumed run")

    answered = client.post(
        f"/d/{debate_id}/seat/alice", data={"token": TOKEN, **ANSWER}, headers=SAME_ORIGIN
    )
    assert answered.status_code == 303, answered.text
    until(lambda: status(root, debate_id) == "complete", "the debate completing")
    verdict = DebateFiles(root, debate_id).verdicts().round(1)["alice"]
    assert (verdict.stance, verdict.conviction) == ("A", 65)
