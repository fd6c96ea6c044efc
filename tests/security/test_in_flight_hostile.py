"""In-flight files as a cloned repository could commit them.

`council/<id>/.in-flight/` is machine-local, but git carries what a repository holds: a
link in its place, or a file written (or forged) on another host. A run sweeps nothing
through such a link and stops with one line naming it; `git add -A` never stages it. A
forged file (an infinite `started`, a field past its bounds) is left out by every reader:
`show`, `show --json` (valid JSON), `watch` on a terminal and the dashboard's event. A file
from another host is shown as such, never counts as a seat waited on, and counts only
while it is being written: once stale, readers skip it and a run sweeps it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from debate_story import (
    Chair,
    Result,
    Runner,
)
from mcp import Client, StdioServerParameters
from offline import clean_environment

from .test_links_out import contents, link_out, new_debate, outside_folder, refused
from .test_terminal_and_host import read_terminal, serving, terminal, watch_on_a_terminal

__all__ = ["terminal"]  # the pseudo-terminal fixture, used by name

# A pid no Linux system gives (pid_max is at most 4,194,304): its writer is dead here.
DEAD_PID = 999_999_999
OTHER_HOST = "build-server-7"
# Left over by killed runs, as the sweep would find them through a link.
LEFTOVERS = (f"{DEAD_PID}-1.json", f"{DEAD_PID}-2.json")


def leftovers_outside(tmp_path: Path) -> Path:
    """A folder outside the root holding files named and shaped as a dead run's leftovers."""
    outside = outside_folder(tmp_path)
    for name in LEFTOVERS:
        data = {"persona": "x", "pid": DEAD_PID, "host": socket.gethostname()}
        (outside / name).write_text(json.dumps(data), encoding="utf-8")
    return outside


def in_flight(folder: Path) -> Path:
    return folder / ".in-flight"


def forged(folder: Path, name: str = "4242-1.json", **fields: Any) -> Path:
    """An in-flight file as another host's run would have written it, with `fields` over."""
    data = {
        "persona": "risk-auditor",
        "phase": "cross-exam",
        "round": 2,
        "state": "streaming",
        "detail": "",
        "chars": 1234,
        "started": time.time() - 30,
        "text": "The risk auditor says so far",
        "pid": int(name.split("-")[0]),
        "host": OTHER_HOST,
        "process_start": 350223,
    } | fields
    path = in_flight(folder) / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def strict_json(text: str) -> Any:
    """JSON as a browser or `jq` reads it: `NaN` and `Infinity` are errors."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def no_traceback(result: Result) -> None:
    assert "Traceback" not in result.text and "OverflowError" not in result.text, result.text


# -- a link in place of the folder ---------------------------------------------------------


def test_a_run_deletes_nothing_through_an_in_flight_link(
    chair: Chair, council: Runner, tmp_path: Path
) -> None:
    outside = leftovers_outside(tmp_path)
    debate_id = new_debate(chair, ("risk-auditor", "growth-cfo"))
    link = in_flight(chair.folder(debate_id))
    link_out(link, outside)
    before = contents(outside)

    result = council("run", debate_id, "--model", "scripted")

    assert contents(outside) == before
    refused(result, link)


def test_council_start_over_mcp_deletes_nothing_through_an_in_flight_link(
    chair: Chair, workdir: Path, tmp_path: Path
) -> None:
    outside = leftovers_outside(tmp_path)
    debate_id = new_debate(chair, ("risk-auditor", "growth-cfo"))
    link = in_flight(chair.folder(debate_id))
    link_out(link, outside)
    before = contents(outside)
    answers: list[str] = []

    async def scenario(client: Client) -> None:
        started = await client.call_tool(
            "council_start", {"debate_id": debate_id, "model": "scripted"}
        )
        if started.is_error:
            answers.append(started.content[0].text)  # type: ignore[union-attr]
            return
        waited = await client.call_tool(
            "council_wait", {"debate_id": debate_id, "timeout_seconds": 30}
        )
        answers.append(json.dumps(waited.structured_content))

    home = tmp_path / "home"
    home.mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreamcontext_council", "council", "mcp"],
        env=clean_environment(os.environ, home),
        cwd=workdir,
    )

    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(params, read_timeout_seconds=60) as client:
                await scenario(client)

    anyio.run(main)
    [answer] = answers
    assert contents(outside) == before
    assert f"{link} is a link out of" in answer, answer


def test_git_add_does_not_stage_an_in_flight_link(
    council: Runner, workdir: Path, root_path: Path, tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    result = council("new", "Where should sessions live?")
    assert result.code == 0, result.text
    debate_id = result.out.strip().split("\n")[-1]
    link_out(in_flight(root_path / "council" / debate_id), outside_folder(tmp_path))
    council("show", debate_id)  # any command keeps the root's ignore files current

    subprocess.run(["git", "add", "-A"], cwd=workdir, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"],
        cwd=workdir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()

    assert f"_dream_context/council/{debate_id}/debate.md" in staged
    assert not [name for name in staged if ".in-flight" in name], staged


# -- a forged file -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"started": float("-inf")},
        {"started": float("inf")},
        {"started": float("nan")},
        {"started": -1e300},
        {"started": 10**400},
        {"chars": 10**40},
        {"round": 10**12},
        {"persona": "p" * 20_000},
        {"phase": "opening\n" * 2_000},
        {"host": "h" * 5_000},
    ],
    ids=lambda fields: f"{next(iter(fields))}={str(next(iter(fields.values())))[:12]}",
)
def test_a_forged_field_leaves_the_file_out_of_show(
    fields: dict[str, Any], running: str, root_path: Path, council: Runner
) -> None:
    folder = root_path / "council" / running
    forged(folder, "4242-1.json", **fields)
    forged(folder, "4242-2.json", persona="growth-cfo")  # a well-formed one beside it

    shown = council("show", running)
    as_json = council("show", running, "--json")

    no_traceback(shown)
    assert shown.code == 0 and as_json.code == 0, shown.text + as_json.text
    calls = strict_json(as_json.out)["in_flight"]
    assert [call["persona"] for call in calls] == ["growth-cfo"]
    assert len(shown.out) < 10_000


def test_watch_on_a_terminal_survives_an_infinite_start(
    running: str, root_path: Path, tmp_path: Path, terminal: tuple[int, int]
) -> None:
    forged(root_path / "council" / running, started=float("-inf"))
    controller, child = terminal
    process = watch_on_a_terminal(child, root_path, running, tmp_path)
    try:
        seen = read_terminal(controller, b"Ctrl-C to stop", 20)
        exited = process.poll()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    text = seen.decode("utf-8", "replace")
    assert exited is None, text  # still watching, not ended by a crash
    assert "Ctrl-C to stop" in text and "Traceback" not in text, text


def test_the_dashboards_in_flight_event_is_valid_json(
    running: str, root_path: Path, tmp_path: Path
) -> None:
    folder = root_path / "council" / running
    forged(folder, "4242-1.json", started=float("-inf"))
    forged(folder, "4242-2.json", persona="growth-cfo", chars=10**40)
    forged(folder, "4242-3.json", persona="user-advocate")

    with serving(root_path, tmp_path) as (url, _):
        data = first_in_flight_event(f"{url.rstrip('/')}/events/{running}")

    calls = strict_json(data)["calls"]
    assert [call["persona"] for call in calls] == ["user-advocate"]


def first_in_flight_event(url: str) -> str:
    """The data of the first `in-flight` event the page's event stream sends."""
    with httpx.stream("GET", url, timeout=30) as stream:
        lines = stream.iter_lines()
        for line in lines:
            if line == "event: in-flight":
                data = next(lines)
                assert data.startswith("data: "), data
                return data.removeprefix("data: ")
    raise AssertionError("the stream ended before an in-flight event")


# -- a file from another host --------------------------------------------------------------


def test_a_file_from_another_host_is_shown_as_such_and_never_waited_on(
    running: str, root_path: Path, council: Runner
) -> None:
    folder = root_path / "council" / running
    forged(folder, "4242-1.json", persona="growth-cfo", state="waiting", chars=0)
    forged(folder, "4242-2.json", persona="user-advocate")
    # A run of this debate, live on this host: this test's own process.
    record = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": "2026-12-05T09"}
    (folder / "run.json").write_text(json.dumps(record), encoding="utf-8")

    shown = council("show", running)
    data = strict_json(council("show", running, "--json").out)

    no_traceback(shown)
    note = f"from host {OTHER_HOST}, not checked"
    assert [call["detail"] for call in data["in_flight"]] == [note, note]
    assert shown.out.count(note) == 2, shown.out
    assert data["run"]["state"] == "running"
    assert data["waiting_for"] == [], "a seat another host says it waits on is not checked"
    assert "waiting for" not in shown.out.split("in flight:")[0], shown.out


def test_a_stale_file_from_another_host_is_left_out_and_swept(
    chair: Chair, council: Runner, root_path: Path
) -> None:
    debate_id = new_debate(chair, ("risk-auditor", "growth-cfo"), rounds=1)
    folder = chair.folder(debate_id)
    fresh = forged(folder, "4242-1.json", persona="growth-cfo")
    stale = forged(folder, "4242-2.json")
    an_hour_ago = time.time() - 3600
    os.utime(stale, (an_hour_ago, an_hour_ago))

    calls = strict_json(council("show", debate_id, "--json").out)["in_flight"]
    assert [call["persona"] for call in calls] == ["growth-cfo"]

    result = council("run", debate_id, "--model", "scripted", "--yes")

    assert result.code == 0, result.text
    assert not stale.exists(), "a run sweeps another host's stale file"
    assert fresh.exists(), "and leaves one that may still be written"
