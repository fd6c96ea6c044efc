"""A seat a person answers (`model: human`) reads as a person, never as a model, and a live
run that waits on it shows `waiting for alice` where it would show running: `list`,
`board`, `show` (text and --json), the export and the dashboard."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from debate_story import Chair, Runner, entry
from markupsafe import escape
from starlette.testclient import TestClient

from dreamcontext_council.dashboard import create_app
from dreamcontext_council.folder.in_flight import in_flight_dir
from dreamcontext_council.folder.paths import Root

# A process that drives the debate as a run would: it takes run.json (unless --no-run) and
# tells, through in-flight files, that it waits on each slug given; then it waits for its
# stdin to close (or, with --exit, leaves at once, its files behind it).
HOLDER = """\
import sys
from pathlib import Path
from dreamcontext_council.folder.in_flight import WAITING, InFlightCall
from dreamcontext_council.folder.run_record import begin_run
folder, root, *rest = sys.argv[1:]
folder, root = Path(folder), Path(root)
if "--no-run" not in rest:
    begin_run(folder, within=root)
for slug in (s for s in rest if not s.startswith("--")):
    InFlightCall(folder, within=root, persona=slug, phase="opening", round=2, state=WAITING).start()
print("ready", flush=True)
if "--exit" not in rest:
    sys.stdin.read()
"""

SEATS = {"alice": "human", "bob": "sonnet", "carol": "openai:gpt-4o", "dave": "Human"}


def person_debate(chair: Chair) -> str:
    """Two people (alice, dave) and two models (bob, carol), round 2 of 3 running."""
    debate_id = chair.new(personas=(), rounds=3)
    for slug, model in SEATS.items():
        chair.ok("agent", "create", debate_id, slug, "--model", model, "--body", f"I am {slug}.")
    chair.play_round(debate_id, 1, {slug: ("A", 60) for slug in SEATS})
    chair.ok("round", "start", debate_id, "2")
    for slug in ("bob", "carol"):  # the models have answered round 2; the people have not
        chair.ok("verdict", debate_id, slug, "2", "--stance", "A", "--conviction", "70",
                 "--headline", "Go")  # fmt: skip
    return debate_id


@contextmanager
def holder(chair: Chair, debate_id: str, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A live process holding the debate's run and waiting on `args`' slugs."""
    folder = chair.folder(debate_id)
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(chair.root), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


def list_row(cli: Runner, debate_id: str) -> str:
    [row] = [line for line in cli("list").out.splitlines() if line.startswith(f"  {debate_id}")]
    return row


def board_top(cli: Runner, debate_id: str) -> str:
    return cli("board", debate_id, "--plain").out.splitlines()[0]


def show_status(cli: Runner, debate_id: str) -> str:
    [line] = [line for line in cli("show", debate_id).out.splitlines() if "status:" in line]
    return line.split("status:", 1)[1].strip()


def badges(page: str) -> list[tuple[str, str]]:
    """Every status badge of a dashboard page: (tone, text)."""
    return re.findall(r'<span class="badge tone-([a-z]+)"[^>]*>([^<]*)</span>', page)


def test_a_person_seat_is_marked_a_person_everywhere(chair: Chair, cli: Runner) -> None:
    debate_id = person_debate(chair)

    board = cli("board", debate_id, "--plain").out
    assert "⬦ alice (person)  — no verdict yet" in board and "⬦ dave (person)  " in board
    assert "bob (person)" not in board and "carol (person)" not in board
    assert "MODELS   2 providers · 2 model families (claude, gpt); 2 people" in board
    data = cli("board", debate_id, "--json").json()
    assert {row["slug"]: row["person"] for row in data["rows"]} == {
        "alice": True,
        "bob": False,
        "carol": False,
        "dave": True,
    }
    assert data["models"]["people"] == ["alice", "dave"]
    assert data["models"]["person_count"] == 2
    assert data["models"]["families"] == ["claude", "gpt"]
    assert "human" not in data["models"]["providers"]

    agents = cli("agent", "list", debate_id).out
    assert re.search(r"^alice +person +rounds 1", agents, re.M)
    assert re.search(r"^bob +sonnet +rounds 1", agents, re.M)
    listed = cli("agent", "list", debate_id, "--json").json()
    assert [a["slug"] for a in listed if a["person"]] == ["alice", "dave"]

    show = cli("show", debate_id).out
    assert "personas:  alice (person), bob, carol, dave (person)" in show
    assert cli("show", debate_id, "--json").json()["people"] == ["alice", "dave"]

    exported = json.loads(cli("export", debate_id, "--format", "json", "-o", "-").out)
    assert {p["slug"]: p["person"] for p in exported["personas"]} == {
        "alice": True,
        "bob": False,
        "carol": False,
        "dave": True,
    }
    markdown = cli("export", debate_id, "--format", "md", "-o", "-").out
    assert "### alice\n\n_person · aspects none_" in markdown
    assert "### bob\n\n_model sonnet · aspects none_" in markdown
    page = cli("export", debate_id, "--format", "html", "-o", "-").out
    card = page.split('id="persona-alice"', 1)[1].split("</header>", 1)[0]
    assert '<span class="tag person"' in card and "tag model" not in card

    with TestClient(create_app(Root(chair.root))) as dashboard:
        page = dashboard.get(f"/d/{debate_id}").text
    card = page.split('id="persona-alice"', 1)[1].split("</header>", 1)[0]
    assert '<span class="tag person"' in card and ">person</span>" in card
    assert "tag model" not in card
    bob = page.split('id="persona-bob"', 1)[1].split("</header>", 1)[0]
    assert '<span class="tag model">sonnet</span>' in bob and "tag person" not in bob
    row = page.split('id="board-alice"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="tag person"' in row
    assert "2 providers · 2 model families (claude, gpt); 2 people" in page


def test_a_live_run_waiting_on_people_says_so_everywhere(chair: Chair, cli: Runner) -> None:
    debate_id = person_debate(chair)
    assert list_row(cli, debate_id).split()[1] == "round_2_running"

    with holder(chair, debate_id, "alice") as process:
        assert list_row(cli, debate_id).split(None, 1)[1].startswith("waiting for alice · ")
        assert "round 2 of 3: waiting for alice ─" in board_top(cli, debate_id)
        assert show_status(cli, debate_id) == "round_2_running · waiting for alice"
        [listed] = cli("list", "--json").json()
        assert listed["waiting_for"] == ["alice"]
        assert listed["run"]["pid"] == process.pid
        assert listed["run"]["line"].endswith(", waiting for alice")
        assert "RUN      running: pid" in cli("board", debate_id, "--plain").out
        shown = cli("show", debate_id, "--json").json()
        assert shown["waiting_for"] == ["alice"] and shown["status"] == "round_2_running"
        assert cli("board", debate_id, "--json").json()["run"]["waiting_for"] == ["alice"]
        with TestClient(create_app(Root(chair.root))) as dashboard:
            assert ("waiting", "waiting for alice") in badges(dashboard.get("/").text)
            page = dashboard.get(f"/d/{debate_id}").text
            assert badges(page) == [("waiting", "waiting for alice")]

    # Killed while waiting: its file says nothing any more; the run shows stopped.
    assert list_row(cli, debate_id).split()[1] == "stopped"
    assert "waiting" not in cli("list").out
    assert "round 2 of 3: stopped" in board_top(cli, debate_id)
    assert cli("show", debate_id, "--json").json()["waiting_for"] == []

    with holder(chair, debate_id, "alice", "dave"):
        assert "waiting for alice, dave" in list_row(cli, debate_id)
        assert "round 2 of 3: waiting for alice, dave" in board_top(cli, debate_id)
        assert cli("list", "--json").json()[0]["waiting_for"] == ["alice", "dave"]
        with TestClient(create_app(Root(chair.root))) as dashboard:
            text = str(escape("waiting for alice, dave"))
            assert ("waiting", text) in badges(dashboard.get(f"/d/{debate_id}").text)


def test_a_dead_writers_waiting_file_does_not_say_waiting(chair: Chair, cli: Runner) -> None:
    debate_id = person_debate(chair)
    # A writer that told it waits on alice and is gone, its file left behind.
    with holder(chair, debate_id, "alice", "--no-run", "--exit") as gone:
        gone.wait(timeout=30)
    assert list(in_flight_dir(chair.folder(debate_id)).iterdir()) != []

    with holder(chair, debate_id):  # the live run, waiting on nobody
        assert list_row(cli, debate_id).split()[1] == "round_2_running"
        assert "round 2 of 3: running" in board_top(cli, debate_id)
        assert show_status(cli, debate_id) == "round_2_running"
        assert cli("list", "--json").json()[0]["waiting_for"] == []
        assert cli("show", debate_id, "--json").json()["waiting_for"] == []
        with TestClient(create_app(Root(chair.root))) as dashboard:
            assert "waiting for" not in dashboard.get("/").text
            assert badges(dashboard.get(f"/d/{debate_id}").text) == [("running", "round_2_running")]


def test_a_waiting_file_counts_only_while_a_round_runs(chair: Chair, cli: Runner) -> None:
    debate_id = chair.new(personas=(), rounds=3)
    chair.ok("agent", "create", debate_id, "alice", "--model", "human", "--body", "I am alice.")
    chair.ok("round", "start", debate_id, "1")
    chair.ok("verdict", debate_id, "alice", "1", "--stance", "A", "--conviction", "60",
             "--headline", "Go")  # fmt: skip
    chair.ok("report", "append", debate_id, "alice", "--round", "1", input=entry())
    chair.ok("round", "end", debate_id, "1")

    with holder(chair, debate_id, "alice"):
        assert list_row(cli, debate_id).split()[1] == "round_1_complete"
        assert cli("show", debate_id, "--json").json()["waiting_for"] == []


def test_a_name_that_is_no_slug_is_not_shown(chair: Chair, cli: Runner) -> None:
    debate_id = person_debate(chair)
    with holder(chair, debate_id, "alice", "\x1b[31mred"):
        assert cli("show", debate_id, "--json").json()["waiting_for"] == ["alice"]
        assert "\x1b" not in cli("list").out
