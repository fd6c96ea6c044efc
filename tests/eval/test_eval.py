"""`council eval`: the methods side by side on a `command:` stub whose answers are known,
resume after SIGKILL without repeating a saved call, `--generate`, and the interval math."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from council_run import Council
from engine.support import wait_for

from dreamcontext_council.actions import live_state
from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.rules.eval_scores import majority, plain_majority, wilson
from dreamcontext_council.rules.eval_set import (
    EvalQuestion,
    generate_arithmetic,
    is_right,
    normalise,
)
from dreamcontext_council.rules.verdicts import Verdict

# Answers every council call like the scripted provider, with the stance it is told:
# the solo answer is always one off, self-consistency sample 2 is one off, and in round 1
# every persona but the last is one off (so the vote is wrong and the council, which
# comes round in round 2, is right). Each call is logged before it answers.
STUB = """\
import json, os, re, sys, time
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
task = task_from_text(sys.stdin.read())
with open(os.environ["EVAL_STUB_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps([task.get(k) for k in ("debate", "persona", "round", "phase", "sample")]) + "\\n")
time.sleep(float(os.environ.get("EVAL_STUB_DELAY", "0")))
answer = scripted_text(task)
found = re.search(r"result of ([0-9+*-]+)\\?", str(task.get("topic", "")))
if found and task.get("phase") in ("opening", "cross-exam", "rebuttal"):
    a, b, c, d, e, f = map(int, re.findall(r"\\d+", found.group(1)))
    value = a + b * c + d - e * f
    persona, personas = task.get("persona"), task.get("personas") or []
    wrong = (
        persona == "(baseline)"
        or (persona == "(self-consistency)" and task.get("sample") == 2)
        or (task.get("round") == 1 and persona in personas[:-1])
    )
    stance = value + 1 if wrong else value
    answer = re.sub(r"^stance: .*$", f"stance: {stance}", answer, flags=re.M)
print(answer)
"""


@pytest.fixture
def stub(tmp_path: Path) -> tuple[str, Path]:
    """The `command:` model and the log of every call it answered."""
    script = tmp_path / "eval_stub.py"
    script.write_text(STUB, encoding="utf-8")
    return f"command:{sys.executable} {script}", tmp_path / "stub-calls.jsonl"


def arithmetic_set(council: Council, tmp_path: Path, count: int, *, seed: int) -> Path:
    """`eval --generate arithmetic COUNT --seed SEED` into tmp_path; the set's path."""
    path = tmp_path / "arith.jsonl"
    made = council("eval", str(path), "--generate", "arithmetic", str(count), "--seed", str(seed))
    assert made.code == 0, made.err
    return path


def logged(path: Path) -> list[tuple[Any, ...]]:
    if not path.exists():
        return []
    return [tuple(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


def results(council: Council) -> dict[str, Any]:
    [folder] = list((council.root / "evals").iterdir())
    data: dict[str, Any] = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return data


def accuracy(data: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {m: (s["right"], s["questions"]) for m, s in data["methods"].items()}


# -- the interval, the votes and the answer types -----------------------------------------


def test_wilson_interval_matches_published_values() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(81, 100) == pytest.approx((0.7222, 0.8749), abs=1e-4)
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_majority_counts_heads_not_conviction() -> None:
    round_one = {
        "a": Verdict("A", 95, "h"),
        "b": Verdict("B", 40, "h"),
        "c": Verdict("B", 40, "h"),
    }
    assert majority(round_one) == "B"
    assert majority({"a": Verdict("A", 50, "h"), "b": Verdict("B", 60, "h")}) == "B"
    assert majority({}) is None
    assert plain_majority(["7", None, "8", "7"]) == "7"
    assert plain_majority([None]) is None


def test_answer_types_compare_what_they_say() -> None:
    options = [{"key": "A", "label": "Migrate now"}, {"key": "B", "label": "Stay"}]
    assert normalise("The result is 1,234.", "number", []) == "1234"
    assert normalise("-133", "number", []) == "-133"
    assert normalise("2.50", "number", []) == "2.5"
    assert normalise("no number here", "number", []) is None
    assert normalise("migrate NOW", "option", options) == "A"
    assert normalise("C", "option", options) is None
    question = EvalQuestion("q", "?", "Paris", [])
    assert is_right("  paris ", question, "exact")
    assert not is_right(None, question, "exact")


def test_generate_writes_the_arithmetic_task_with_its_values(
    council: Council, tmp_path: Path
) -> None:
    first, second, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((first, "7"), (second, "7"), (other, "8")):
        result = council("eval", str(path), "--generate", "arithmetic", "12", "--seed", seed)
        assert result.code == 0, result.err
    lines = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 12
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    for line in lines:
        expression = line["question"].split("result of ")[1].split("?")[0]
        a, b, c, d, e, f = (
            int(n) for n in expression.replace("*", "+").replace("-", "+").split("+")
        )
        assert expression == f"{a}+{b}*{c}+{d}-{e}*{f}"
        assert int(line["answer"]) == a + b * c + d - e * f
    assert [q.answer for q in generate_arithmetic(12, 7)] == [line["answer"] for line in lines]
    assert not council.root.exists()  # generating holds no eval


def test_a_bad_set_line_is_named_and_nothing_is_written(council: Council, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "q1", "question": "?", "answer": "1"}\nnot json\n', encoding="utf-8")
    result = council("eval", str(path))
    assert result.code != 0
    assert "line 2" in result.err
    assert council.tree() == {}


# -- the methods on a stub with known answers ---------------------------------------------


def test_methods_side_by_side_on_a_command_stub(
    council: Council, stub: tuple[str, Path], tmp_path: Path
) -> None:
    model, log = stub
    path = arithmetic_set(council, tmp_path, 3, seed=1)
    env = {"EVAL_STUB_LOG": str(log)}
    args = ("eval", str(path), "--answer-type", "number", "--model", model, "--samples", "3")
    result = council(*args, "--json", env=env)
    assert result.code == 0, result.err
    data = results(council)
    assert accuracy(data) == {
        "council": (3, 3),
        "solo": (0, 3),
        "vote": (0, 3),
        "weighted": (3, 3),
        "self-consistency": (3, 3),
    }
    assert data["methods"]["solo"]["calls"] == 3
    assert data["methods"]["self-consistency"]["calls"] == 9
    assert data["methods"]["council"]["interval_95"] == pytest.approx([0.4385, 1.0], abs=1e-4)
    # Every question is an ordinary, complete debate; its solo call is booked there.
    for row in data["rows"]:
        assert council.status(row["debate"]) == "complete"
        callers = [r["persona"] for r in council.usage(row["debate"])]
        assert callers.count("(baseline)") == 1
        assert callers.count("(self-consistency)") == 3
    folder = council.root / "evals" / data["id"]
    assert "| Full council | 3/3 |" in (folder / "results.md").read_text(encoding="utf-8")
    assert (folder / "accuracy-cost.svg").read_text(encoding="utf-8").startswith("<svg")
    # The same command again finds everything saved: no call at all.
    calls = len(logged(log))
    again = council(*args, env=env)
    assert again.code == 0, again.err
    assert len(logged(log)) == calls
    assert accuracy(results(council)) == accuracy(data)
    # Overlapping runs leave this process's live file unthrottled for the next command.
    assert not live_state._holds


def test_an_option_set_on_the_scripted_provider(council: Council, tmp_path: Path) -> None:
    path = tmp_path / "options.jsonl"
    lines = [
        {"id": "q1", "question": "Ship it?", "options": {"A": "Ship", "B": "Wait"}, "answer": "A"},
        {
            "id": "q2",
            "question": "Hire?",
            "options": {"A": "Hire", "B": "Freeze"},
            "answer": "Freeze",
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = council("eval", str(path))
    assert result.code == 0, result.err
    data = results(council)
    assert data["answer_type"] == "option"
    # The scripted council backs the first option: right on q1, wrong on q2.
    assert accuracy(data)["council"] == (1, 2)
    assert [row["answers"]["council"] for row in data["rows"]] == ["A", "A"]


# -- resume after SIGKILL -------------------------------------------------------------


@pytest.mark.slow
def test_resume_after_sigkill_repeats_no_saved_call(
    council: Council, stub: tuple[str, Path], tmp_path: Path
) -> None:
    model, log = stub
    path = arithmetic_set(council, tmp_path, 4, seed=2)
    env = {"EVAL_STUB_LOG": str(log), "EVAL_STUB_DELAY": "0.3"}
    args = ("eval", str(path), "--answer-type", "number", "--model", model, "--parallel", "2")

    def saved_persona_answers() -> set[tuple[Any, ...]]:
        saved = set()
        for debate_id in council.ids():
            for r in council.usage(debate_id):
                if r["outcome"] == "ok" and r["phase"] in ("opening", "cross-exam"):
                    saved.add((debate_id, r["persona"], r["round"], r["phase"]))
        return saved

    process = council.spawn(*args, env=env)
    try:
        wait_for(lambda: len(saved_persona_answers()) >= 3, timeout=120)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()  # waits, and closes its pipes
    assert not list((council.root / "evals").glob("*/results.json"))  # killed mid-way
    before_kill = saved_persona_answers()
    solo_saved = {
        p.name.split(".")[0] for p in (council.root / "evals").glob("*/answers/*.solo.md")
    }
    debates = json.loads(next((council.root / "evals").glob("*/debates.json")).read_text())
    asked_before = len(logged(log))

    result = council.proc(*args, env=env, timeout=300)
    assert result.code == 0, result.err
    asked_after = logged(log)[asked_before:]
    repeated = [call for call in asked_after if (call[0], call[1], call[2], call[3]) in before_kill]
    assert repeated == []
    solo_of = {v: k for k, v in debates.items()}
    assert [
        c for c in asked_after if c[1] == "(baseline)" and solo_of.get(c[0]) in solo_saved
    ] == []
    assert accuracy(results(council)) == {
        "council": (4, 4),
        "solo": (0, 4),
        "vote": (0, 4),
        "weighted": (4, 4),
    }


def test_a_failing_model_stops_the_eval_with_how_to_resume(
    council: Council, tmp_path: Path
) -> None:
    script = tmp_path / "broken.py"
    script.write_text("import sys\nsys.stdin.read()\nsys.exit(3)\n", encoding="utf-8")
    path = arithmetic_set(council, tmp_path, 2, seed=1)
    result = council(
        "eval",
        str(path),
        "--answer-type",
        "number",
        "--model",
        f"command:{sys.executable} {script}",
    )
    assert result.code != 0
    assert "`dreamcontext council eval` command again" in result.err
    assert not list((council.root / "evals").glob("*/results.json"))


def test_max_calls_holds_for_the_whole_eval_and_the_same_command_goes_on(
    council: Council, stub: tuple[str, Path], tmp_path: Path
) -> None:
    model, log = stub
    path = arithmetic_set(council, tmp_path, 3, seed=1)
    env = {"EVAL_STUB_LOG": str(log)}
    # 3 questions x (1 solo + 4 personas x 2 rounds + synthesis) = 30 calls; 7 allowed.
    args = ("eval", str(path), "--answer-type", "number", "--model", model, "--parallel", "3")
    stopped = council(*args, "--max-calls", "7", env=env)
    assert stopped.code == EXIT_STOPPED, stopped.out
    assert "--max-calls 7 reached" in stopped.err
    assert "`dreamcontext council eval` command again" in stopped.err
    assert len(logged(log)) == 7  # across every question, not 7 each
    assert not list((council.root / "evals").glob("*/results.json"))

    done = council(*args, env=env)
    assert done.code == 0, done.err
    assert len(logged(log)) == 30  # the 7 saved answers are not asked again
    assert results(council)["questions"] == 3
