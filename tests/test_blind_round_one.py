"""A person's seat answers round 1 blind: while `council run --human alice` waits for
alice's round-1 entry, no reader she can look at shows another seat's stance, conviction,
headline or summary (the run's own output, `show`, `show --json`, `board`, `board --json`,
the dashboard's pages and events, the MCP server's status and board), only that a seat
has answered. Once she answers and round 1 closes, every reader shows it all again."""

from __future__ import annotations

import io
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from council_run import Council, roster_file
from debate_story import OPTIONS, TOPIC, council_argv, entry
from mcp import Client, StdioServerParameters
from offline import clean_environment
from rich.console import Console

from dreamcontext_council.dashboard.server import bind, build_server
from dreamcontext_council.dashboard.watch import watched_board
from dreamcontext_council.engine.model_calls.progress import LiveProgress
from dreamcontext_council.folder.in_flight import WAITING, read_in_flight
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.debate import Status
from dreamcontext_council.rules.sealing import pending_people, round_one_sealed, sealed_log

PERSON = "alice"
MODELS = ("risk-auditor", "growth-cfo")


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


@contextmanager
def dashboard(root: Path) -> Iterator[str]:
    """The dashboard on 127.0.0.1 and a free port, as `council serve` runs it."""
    sock = bind("127.0.0.1", 0)
    server = build_server(Root(root), "127.0.0.1", sock)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: bool(server.started) or not thread.is_alive(), "the dashboard started")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def events(url: str, seconds: float) -> str:
    """What a debate's event stream sends within `seconds` of connecting."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        with httpx.Client(timeout=30) as client, client.stream("GET", url) as response:
            for line in response.iter_lines():
                lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    found = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            found.append(lines.get(timeout=left))
        except queue.Empty:
            break
    assert found and found[0].startswith("retry:"), found
    return "\n".join(found)


def mcp_reads(workdir: Path, env: dict[str, str], debate_id: str) -> list[dict[str, Any]]:
    """`council_status` and `council_board` of the debate, from `council mcp` in `workdir`."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=env,
        cwd=workdir,
    )
    found: list[dict[str, Any]] = []

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                for tool, more in (("council_status", {}), ("council_board", {"round": 1})):
                    result = await client.call_tool(tool, {"debate_id": debate_id, **more})
                    assert not result.is_error, result.content
                    assert result.structured_content is not None
                    found.append(result.structured_content)

    anyio.run(main)
    return found


def in_flight_writer(folder: Path, root: Path, text: str) -> subprocess.Popen[str]:
    """A live process streaming a model seat's round-1 answer into an in-flight file, as a
    run does while the call runs; it holds until its stdin closes."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from dreamcontext_council.folder.in_flight import InFlightCall\n"
        "call = InFlightCall(Path(sys.argv[1]), within=Path(sys.argv[2]), persona='late-model',"
        " phase='opening', round=1)\n"
        "call.start()\n"
        "call.add(sys.argv[3])\n"
        "call.flush()\n"
        "print('ready', flush=True)\n"
        "sys.stdin.read()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(folder), str(root), text],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


class Readers:
    """Everything a person can read of the debate, each reader's text by name."""

    def __init__(self, council: Council, env: dict[str, str], debate_id: str) -> None:
        self.council, self.env, self.debate_id = council, env, debate_id
        self.entry_found = False

    def cli(self) -> dict[str, str]:
        found = {}
        for name, args in {
            "show": ("show", "--log"),
            "show --json": ("show", "--json"),
            "board": ("board", "--plain", "--round", "1"),
            "board --json": ("board", "--json", "--round", "1"),
            "summaries": ("summaries", "1"),
            "timeline": ("timeline",),
            "export": ("export", "--format", "json", "-o", "-"),
            "round-context": ("round-context", PERSON),  # the page the person answers from
        }.items():
            done = self.council.proc(*args[:1], self.debate_id, *args[1:])
            assert done.code == 0, done.err
            found[name] = done.out
        # `watch` draws this board, with the calls in progress below it.
        found["watch"] = watched_board(Root(self.council.root), self.debate_id, in_flight=True)[0]
        live = self.council.root / "tmp" / ".council-live.json"
        found["live file"] = live.read_text(encoding="utf-8")
        return found

    def dashboard(self, events_for: float = 1.5) -> dict[str, str]:
        with dashboard(self.council.root) as url, httpx.Client(timeout=30) as client:
            found = {
                name: client.get(url + path)
                for name, path in {
                    "dashboard page": f"/d/{self.debate_id}",
                    "dashboard list": "/",
                    "dashboard entry": f"/d/{self.debate_id}/entry/{MODELS[0]}/1",
                    "dashboard transcript": f"/d/{self.debate_id}/transcript/{MODELS[0]}",
                }.items()
            }
            # A sealed entry is not there to open (404): its cell has nothing to open.
            self.entry_found = found["dashboard entry"].status_code == 200
            assert {r.status_code for n, r in found.items() if n != "dashboard entry"} == {200}
            stream = events(f"{url}/events/{self.debate_id}", events_for)
        return {name: r.text for name, r in found.items()} | {"events": stream}

    def mcp(self) -> dict[str, str]:
        status, board = mcp_reads(self.council.workdir, self.env, self.debate_id)
        return {"mcp status": json.dumps(status), "mcp board": json.dumps(board)}


def json_text(text: str) -> str:
    """A reader's text with the JSON escapes of non-ASCII characters read back."""
    return re.sub(r"\\u([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), text)


def said_of_round_one(folder: Path, slugs: tuple[str, ...]) -> dict[str, list[str]]:
    """What each seat said in round 1, read from the files: headline, summary, stance."""
    verdicts = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))["rounds"]["1"]
    found = {}
    for slug in slugs:
        verdict = verdicts[slug]
        report = (folder / slug / "report.md").read_text(encoding="utf-8")
        summary = report.split("### Executive Summary", 1)[1].strip().split("\n", 1)[0]
        found[slug] = [
            verdict["headline"],
            summary[:60],
            f"{verdict['stance']} {verdict['conviction']}",
        ]
    return found


def test_no_reader_shows_a_peer_stance_until_the_persons_round_1_answer_is_in(
    tmp_path: Path, workdir: Path, root_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = clean_environment(os.environ, home) | {"DREAMCONTEXT_ROOT": str(root_path)}
    council = Council(root_path, workdir, env)
    roster = roster_file(tmp_path / "roster.json", dict.fromkeys(MODELS, "scripted"))
    arguments = ("--personas", roster, "--rounds", "2", "--human", PERSON)
    out, err = tmp_path / "run.out", tmp_path / "run.err"
    with out.open("wb") as out_file, err.open("wb") as err_file:
        run = subprocess.Popen(
            council_argv("run", "--topic", TOPIC, "--options", OPTIONS, *arguments),
            stdin=subprocess.DEVNULL,
            stdout=out_file,
            stderr=err_file,
            cwd=workdir,
            env=env,
        )
    writer: subprocess.Popen[str] | None = None
    try:
        ids: list[str] = []

        def waits_for_person_after_models() -> bool:
            council_dir = root_path / "council"
            ids[:] = [p.name for p in council_dir.glob("council_*")] if council_dir.exists() else []
            if len(ids) != 1:
                return False
            folder = council_dir / ids[0]
            waiting = any(
                c.persona == PERSON and c.state == WAITING and c.round == 1
                for c in read_in_flight(folder)
            )
            verdicts = folder / "verdicts.json"
            landed = verdicts.exists() and set(MODELS) <= set(
                json.loads(verdicts.read_text(encoding="utf-8")).get("rounds", {}).get("1", {})
            )
            told = err.read_text(encoding="utf-8")
            return waiting and landed and all(f"{slug}: done" in told for slug in MODELS)

        wait_for(lambda: waits_for_person_after_models() or run.poll() is not None, "the wait")
        assert run.poll() is None, err.read_text(encoding="utf-8")
        [debate_id] = ids
        folder = council.folder(debate_id)
        said = said_of_round_one(folder, MODELS)
        # A model call still streaming its round-1 answer: its text is sealed too.
        streaming = "Stance: B, conviction 88: the streaming seat leans to staying."
        writer = in_flight_writer(folder, root_path, streaming)
        readers = Readers(council, env, debate_id)

        sealed = {
            "run output": out.read_text(encoding="utf-8") + err.read_text(encoding="utf-8"),
            **readers.cli(),
            **readers.dashboard(),
            **readers.mcp(),
        }
        for reader, text in sealed.items():
            for slug, phrases in said.items():
                headline, summary, stance = phrases
                for phrase in (headline, summary):
                    assert phrase not in text, f"{reader} shows {slug}'s {phrase!r} in round 1"
                shown = re.search(rf"\b{stance}\b", text)
                assert not shown, f"{reader} shows {slug}'s stance {stance!r} in round 1"
            assert "the streaming seat leans" not in text, reader
            assert not re.search(r"→ [AB]\b", text), f"{reader} shows who leads: {text}"
        assert not readers.entry_found
        # Only that a seat has answered.
        assert "risk-auditor: done" in sealed["run output"]
        assert re.search(
            r"⬦ risk-auditor +— answered, sealed until round 1 closes", sealed["board"]
        )
        told = r"risk-auditor: done · \d+ tokens · sealed until round 1 closes"
        assert re.search(told, sealed["run output"])
        board = json.loads(sealed["board --json"])
        assert board["leading"] is None and board["convergence"] == 0
        assert [t["count"] for t in board["tally"]] == [0, 0]
        assert {r["slug"]: r["sealed"] for r in board["rows"]} == {
            "alice": False,
            "growth-cfo": True,
            "risk-auditor": True,
        }
        assert sorted(json.loads(sealed["show --json"])["sealed"]) == sorted(MODELS)
        for rows in (board["rows"], json.loads(sealed["mcp board"])["board"]["rows"]):
            assert [row["stance"] for row in rows] == [None, None, None]
        live = json.loads(sealed["live file"])
        assert "leading" not in live and not any("stance" in p for p in live["personas"])
        assert "answered · sealed until round 1 closes" in sealed["dashboard page"]
        assert '"late-model"' in sealed["events"] and '"text": ""' in sealed["events"]

        writer.stdin.close()  # type: ignore[union-attr]
        writer.wait(timeout=30)
        writer = None
        # alice answers round 1; the run goes on and waits for her again in round 2.
        verdict = council.proc(
            "verdict", debate_id, PERSON, "1", "--stance", "B", "--conviction", "65",
            "--headline", "Stay on Redis until the cutover is rehearsed",
        )  # fmt: skip
        assert verdict.code == 0, verdict.err
        body = entry("Stay on Redis: the cutover has never been rehearsed.", position="Option B.")
        report = council.proc("report", "append", debate_id, PERSON, "--round", "1", "--body", body)
        assert report.code == 0, report.err
        wait_for(
            lambda: (
                any(c.round == 2 and c.persona == PERSON for c in read_in_flight(folder))
                or run.poll() is not None
            ),
            "round 2",
        )
        assert run.poll() is None, err.read_text(encoding="utf-8")

        unsealed = {
            "run output": out.read_text(encoding="utf-8") + err.read_text(encoding="utf-8"),
            **readers.cli(),
            **readers.dashboard(events_for=0.5),
            **readers.mcp(),
        }
        for slug, (headline, summary, stance) in said.items():
            for reader in ("board", "board --json", "dashboard page", "mcp board"):
                assert headline in json_text(unsealed[reader]), (reader, slug)
            for reader in ("show", "show --json", "summaries", "dashboard page", "mcp status"):
                assert summary in json_text(unsealed[reader]), (reader, slug)
            assert f"{slug} {stance}" in unsealed["run output"]
        assert json.loads(unsealed["show --json"])["sealed"] == []
        assert readers.entry_found
        assert '"prevStance": "' in unsealed["live file"]  # round 1's, beside round 2's
        # A round-1 call's text in progress shows again once round 1 is closed.
        writer = in_flight_writer(folder, root_path, streaming)
        assert "the streaming seat leans" in readers.dashboard()["events"]
    finally:
        if writer is not None:
            writer.kill()
            writer.wait()
        run.kill()
        run.wait()


def rendered(progress: LiveProgress) -> str:
    console = Console(file=io.StringIO(), width=120)
    with console.capture() as capture:
        console.print(progress._shown())
    return capture.get()


def test_the_live_table_counts_a_sealed_seats_text_and_shows_none_of_it() -> None:
    progress = LiveProgress(io.StringIO())
    progress.round_started(1, "blind opening", ["contrarian", PERSON])
    progress.seal_text(["contrarian", PERSON])
    progress.persona("contrarian", "thinking")
    progress.call_started("contrarian")
    progress.streamed("contrarian", "### Executive Summary\nWe should wait.\n")
    screen = rendered(progress)
    assert "We should wait" not in screen and re.search(r"contrarian.*streaming.* 38 ", screen)

    progress.round_started(2, "cross-examination", ["contrarian", PERSON])  # not sealed
    progress.persona("contrarian", "thinking")
    progress.streamed("contrarian", "### Executive Summary\nWe should wait.\n")
    assert "We should wait" in rendered(progress)


def test_round_one_is_sealed_only_while_it_runs_and_a_person_has_not_answered() -> None:
    running, closed = Status("running", 1), Status("round_complete", 1)
    answered = {"alice": object()}
    assert pending_people(["alice"], answered, reported=[]) == ["alice"]  # verdict, no entry
    assert pending_people(["alice"], {}, reported=["alice"]) == ["alice"]  # entry, no verdict
    assert pending_people(["alice"], answered, reported=["alice"]) == []
    assert round_one_sealed(running, ["alice"])
    assert not round_one_sealed(running, [])
    assert not round_one_sealed(closed, ["alice"])  # excused when round 1 closed without her
    assert not round_one_sealed(Status("running", 2), ["alice"])


def test_the_round_log_keeps_who_answered_round_one_and_seals_what_they_said() -> None:
    log = (
        "# Round log — council_AbC12345\n\n"
        "## Round 1 started — 2026-01-02\n- Personas: bob, alice\n\n"
        "## Report submitted — bob in round 1 — 2026-01-02T10:00:00Z\n"
        "- Executive summary: Migrate now: the pool is saturated.\n\n"
        "## Report replaced — bob in round 1 — 2026-01-02T10:01:00Z\n"
        "- Executive summary: Migrate this week.\n\n"
        "## Report submitted — bob in round 2 — 2026-01-03T10:00:00Z\n"
        "- Executive summary: Still migrate.\n"
    )
    sealed = sealed_log(log)
    assert "Migrate now" not in sealed and "Migrate this week" not in sealed
    assert sealed.count("- Executive summary: sealed until round 1 closes") == 2
    assert "## Report replaced — bob in round 1 — 2026-01-02T10:01:00Z" in sealed
    assert "- Personas: bob, alice" in sealed and "- Executive summary: Still migrate." in sealed
