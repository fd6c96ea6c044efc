"""`run` without an id: `run @last` goes on with the newest debate; plain `run` resumes the
one debate whose run stopped, and asks for an id or a topic when none or several did."""

from __future__ import annotations

from dreamcontext_council.errors import EXIT_STOPPED, EXIT_USAGE

from .support import OPTIONS, TOPIC, Council

OTHER = "Should we move CI to self-hosted runners?"


def stopped_run(council: Council, topic: str = TOPIC) -> str:
    """A scripted run of one round stopped by --max-calls after two calls (a limit it
    remembers: a resume passes a higher one); its id."""
    done = council("run", "--topic", topic, "--options", OPTIONS, "--rounds", "1")
    assert done.code == 0, done.err  # made whole, then a second one is stopped
    stopped = council("run", "--topic", topic, "--rounds", "1", "--max-calls", "2", "--yes")
    assert stopped.code == EXIT_STOPPED, stopped.err
    return stopped.last_line


def test_run_at_last_goes_on_with_the_newest_debate(council: Council) -> None:
    debate_id = stopped_run(council)

    resumed = council.proc("run", "@last", "--max-calls", "50", "--quiet")

    assert resumed.code == 0, resumed.err
    assert resumed.err.startswith(f"{debate_id}, the newest debate: {TOPIC[:20]}")
    assert resumed.last_line == debate_id
    assert council.status(debate_id) == "complete"


def test_plain_run_resumes_the_one_stopped_run_and_names_it(council: Council) -> None:
    debate_id = stopped_run(council)
    newer = council.new_debate()  # made after it, never run: not what `run` resumes

    resumed = council.proc("run", "--max-calls", "50", "--quiet")

    assert resumed.code == 0, resumed.err
    assert resumed.err.split("\n")[0].startswith(f"{debate_id}, the one run that stopped: ")
    assert council.status(debate_id) == "complete"
    assert council.status(newer) == "created" and council.usage(newer) == []


def test_plain_run_asks_which_when_several_runs_stopped(council: Council) -> None:
    first = stopped_run(council)
    second = stopped_run(council, OTHER)
    calls = {d: len(council.usage(d)) for d in (first, second)}

    asked = council.proc("run")

    assert asked.code == EXIT_USAGE
    [line] = asked.err.strip().split("\n")
    assert 'Pass either a debate id or --topic "…"' in line
    assert f"2 runs stopped and can be resumed ({second}, {first})" in line
    assert {d: len(council.usage(d)) for d in (first, second)} == calls


def test_plain_run_with_nothing_stopped_keeps_its_usage_error(council: Council) -> None:
    done = council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1")
    assert done.code == 0, done.err

    asked = council.proc("run")

    assert asked.code == EXIT_USAGE
    assert 'Pass either a debate id or --topic "…" (not both)' in asked.err
    assert asked.err.count("\n") == 1
