"""A person's seat in `council run`: the run waits for the person's entry each round, a
second process answers with `verdict` and `report append`, and the debate goes on with the
seat cross-examining and cross-examined, with no model ever called for it."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from dreamcontext_council.folder.in_flight import WAITING, in_flight_dir, read_in_flight

from .support import OPTIONS, TOPIC, Council, entry, roster_file, wait_for

PERSON = "alice"


def person_roster(tmp_path: Path) -> str:
    """Two scripted personas and a person's seat, given in the roster as `model: human`."""
    models = {"risk-auditor": "scripted", "growth-cfo": "scripted", PERSON: "human"}
    return roster_file(tmp_path / "roster.json", models)


def start_run(council: Council, tmp_path: Path, *extra: str) -> subprocess.Popen[bytes]:
    return council.spawn(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        person_roster(tmp_path),
        "--rounds",
        "2",
        *extra,
    )


def waiting_round(council: Council) -> int | None:
    """The round the run waits on the person for, as its waiting file says (None: not waiting)."""
    ids = council.ids()
    if not ids:
        return None
    calls = read_in_flight(council.folder(ids[0]))
    found = [c.round for c in calls if c.persona == PERSON and c.state == WAITING]
    return found[0] if found else None


def waits_in(council: Council, number: int, process: subprocess.Popen[bytes]) -> None:
    wait_for(lambda: waiting_round(council) == number or process.poll() is not None)
    assert process.poll() is None, process.communicate()[1].decode()


def answer(council: Council, debate_id: str, number: int, stance: str = "B") -> None:
    """The person answers round N from another process, as the run tells them: one
    `report append` whose entry ends with its verdict block."""
    body = entry("Stay on Redis: the cutover has never been rehearsed.", position="Option B.")
    if number == 2:
        peer = council.meta(debate_id)["cross_examination"][PERSON]
        body += (
            f"\n### Cross-examination\n> {peer} says the migration is cheap.\n"
            "It leaves out the dual-write period.\nScore: 5/10\n"
        )
    body += (
        f"\n```verdict\nstance: {stance}\nconviction: 65\n"
        "headline: Stay on Redis until the cutover is rehearsed\nconcession: none\n```\n"
    )
    report = council.proc(
        "report", "append", debate_id, PERSON, "--round", str(number), "--body", body
    )
    assert report.code == 0, report.err


def test_the_run_waits_for_the_person_each_round_and_goes_on_when_they_answer(
    council: Council, tmp_path: Path
) -> None:
    process = start_run(council, tmp_path)
    try:
        waits_in(council, 1, process)
        debate_id = council.only_id()
        assert council.status(debate_id) == "round_1_running"  # the round waits on the person
        answer(council, debate_id, 1)
        waits_in(council, 2, process)
        answer(council, debate_id, 2)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    text = err.decode()

    assert process.returncode == 0, text
    assert council.status(debate_id) == "complete"
    assert (council.folder(debate_id) / "final-report.md").exists()
    # Told once a round, with the exact commands.
    assert text.count(f"dreamcontext council round-context {debate_id} {PERSON}") == 2
    assert f"dreamcontext council report append {debate_id} {PERSON} --round 1" in text
    assert "then the verdict block the entry ends with: ```verdict" in text
    assert f"dreamcontext council verdict {debate_id}" not in text  # one command per answer
    assert f"dreamcontext council report append {debate_id} {PERSON} --round 2" in text
    # No model call for the person, ever; the others answered both rounds.
    usage = council.usage(debate_id)
    assert usage
    assert not [u for u in usage if u["persona"] == PERSON]
    assert {(u["persona"], u["round"]) for u in usage if u["phase"] == "cross-exam"} == {
        ("risk-auditor", 2),
        ("growth-cfo", 2),
    }
    # The person's seat cross-examines and is cross-examined.
    pairs = council.meta(debate_id)["cross_examination"]
    assert PERSON in pairs
    assert PERSON in pairs.values()
    reviews = council.json_file(debate_id, "reviews.json")["rounds"]["2"]
    assert reviews[PERSON]["target"] == pairs[PERSON]
    assert reviews[PERSON]["score"] == 5
    critic = next(c for c, peer in pairs.items() if peer == PERSON)
    assert reviews[critic]["target"] == PERSON
    context = council.text(debate_id, f"{PERSON}/context-and-persona.md")
    assert "model: human" in context
    verdicts = council.json_file(debate_id, "verdicts.json")["rounds"]
    assert verdicts["1"][PERSON]["stance"] == "B"
    assert verdicts["2"][PERSON]["stance"] == "B"
    assert not list(in_flight_dir(council.folder(debate_id)).glob("*.json"))
    # The synthesizer reads the person's answers, named as a person's, not a model's.
    synthesis = council.text(debate_id, "synthesis-input.md")
    assert f"holds the seat of {PERSON} (a person)" in synthesis
    assert f'<answer persona="{PERSON}" round="2" seat="a person"' in synthesis
    assert '<answer persona="growth-cfo" round="2" final="yes">' in synthesis


def test_ctrl_c_while_waiting_stops_cleanly_and_run_waits_again(
    council: Council, tmp_path: Path
) -> None:
    process = start_run(council, tmp_path)
    waits_in(council, 1, process)
    debate_id = council.only_id()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)

    assert process.returncode == 130, err.decode()
    assert err.decode().strip().splitlines()[-1] == (
        "Error: Stopped by Ctrl-C; every answer already given is saved. "
        f"Run `dreamcontext council run {debate_id}` to go on from where it stopped."
    )
    assert waiting_round(council) is None
    assert not list(in_flight_dir(council.folder(debate_id)).glob("*.json"))
    again = council.spawn("run", debate_id)
    try:
        waits_in(council, 1, again)
    finally:
        again.send_signal(signal.SIGINT)
        again.communicate(timeout=60)
    assert again.returncode == 130


def test_a_person_who_does_not_answer_in_time_is_missing_for_the_round(
    council: Council, tmp_path: Path
) -> None:
    process = start_run(council, tmp_path, "--human-timeout", "1")
    out, err = process.communicate(timeout=120)

    assert process.returncode == 0, err.decode()
    debate_id = council.only_id()
    assert council.status(debate_id) == "complete"
    log = council.log(debate_id)
    for number in (1, 2):
        assert f"## Persona failed — {PERSON} in round {number}" in log
    assert log.count("- the person in this seat did not answer within 1 s (--human-timeout)") == 2
    assert "Missing: alice" in log
    assert not [u for u in council.usage(debate_id) if u["persona"] == PERSON]
    assert council.meta(debate_id)["run"]["human_timeout"] == 1
    short = "did not answer rounds 1 and 2 (the person in this seat did not answer within 1 s"
    assert short in out.decode()
    report = council.text(debate_id, "final-report.md")
    assert "**The council was short:** alice did not answer rounds 1 and 2." in report


def test_a_run_killed_while_waiting_waits_again_and_takes_an_entry_written_meanwhile(
    council: Council, tmp_path: Path
) -> None:
    process = start_run(council, tmp_path)
    waits_in(council, 1, process)
    debate_id = council.only_id()
    process.send_signal(signal.SIGKILL)
    process.communicate()

    again = council.spawn("run", debate_id)
    try:
        waits_in(council, 1, again)
        [waiting] = [c for c in read_in_flight(council.folder(debate_id)) if c.persona == PERSON]
        assert waiting.detail.startswith(f"waiting for {PERSON} since ")
        again.send_signal(signal.SIGKILL)
        again.communicate()
        # Written while no run waits: the next run takes it and goes on to round 2.
        answer(council, debate_id, 1)
        last = council.spawn("run", debate_id)
        waits_in(council, 2, last)
        # The stale waiting files of the killed runs are swept.
        assert len(list(in_flight_dir(council.folder(debate_id)).glob("*.json"))) == 1
        answer(council, debate_id, 2)
        _, err = last.communicate(timeout=120)
    finally:
        for running in (again, locals().get("last")):
            if isinstance(running, subprocess.Popen) and running.poll() is None:
                running.kill()
                running.communicate()
    assert last.returncode == 0, err.decode()
    assert council.status(debate_id) == "complete"
    text = err.decode()
    assert f"round-context {debate_id} {PERSON}" in text
    assert f"verdict {debate_id} {PERSON} 1 --stance" not in text  # round 1 was taken, not waited
    usage = council.usage(debate_id)
    assert not [u for u in usage if u["persona"] == PERSON]
    assert (
        json.loads((council.folder(debate_id) / "verdicts.json").read_text())["rounds"]["1"][
            PERSON
        ]["stance"]
        == "B"
    )
