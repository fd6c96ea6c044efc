"""An eval's debates in their place: left out of `list` unless asked for, results.md naming
the scripted stand-in when it gave the answers, and a plot whose call axis counts whole
calls."""

from __future__ import annotations

import json
import re
from pathlib import Path

from council_run import Council

from dreamcontext_council.views.eval_results import accuracy_cost_svg

QUESTIONS = [
    {"id": "ship", "question": "Ship it?", "options": {"A": "Ship", "B": "Wait"}, "answer": "A"},
    {"id": "hire", "question": "Hire?", "options": {"A": "Hire", "B": "Freeze"}, "answer": "B"},
    {"id": "move", "question": "Move?", "options": {"A": "Move", "B": "Stay"}, "answer": "A"},
]


def an_eval(council: Council, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A finished eval of QUESTIONS on the scripted stand-in: its folder and its debates."""
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    done = council("eval", str(path))
    assert done.code == 0, done.err
    [folder] = list((council.root / "evals").iterdir())
    debates: dict[str, str] = json.loads((folder / "debates.json").read_text("utf-8"))
    return folder, debates


def test_list_leaves_an_evals_debates_out_unless_asked(council: Council, tmp_path: Path) -> None:
    made = council("new", "Adopt Postgres for sessions?")
    assert made.code == 0, made.err
    mine = made.out.strip().splitlines()[-1]
    _, debates = an_eval(council, tmp_path)
    listed = council("list", "--all")
    assert listed.code == 0, listed.err
    assert mine in listed.out
    assert not any(debate in listed.out for debate in debates.values())
    assert "3 eval debates left out (pass --evals to list them)" in listed.out
    as_json = council("list", "--all", "--json")
    assert [e["id"] for e in json.loads(as_json.out)] == [mine]
    every = council("list", "--all", "--evals")
    assert every.code == 0, every.err
    assert all(debate in every.out for debate in [mine, *debates.values()])
    assert "left out" not in every.out


def test_results_say_the_scripted_stand_in_gave_the_answers(
    council: Council, tmp_path: Path
) -> None:
    folder, _ = an_eval(council, tmp_path)
    results = json.loads((folder / "results.json").read_text("utf-8"))
    assert results["calls"] > 0
    assert results["stand_in_calls"] == results["calls"]
    text = (folder / "results.md").read_text("utf-8")
    assert "Every answer came from the scripted stand-in, not a model" in text.split("|")[0]


def ticks(svg: str) -> list[str]:
    """The x axis's tick labels: the texts centred under the plot."""
    return re.findall(r'<text x="[\d.]+" y="\d+" text-anchor="middle">([^<]+)</text>', svg)[:-1]


def test_the_call_axis_counts_whole_calls() -> None:
    def line(calls: int) -> dict[str, object]:
        return {
            "right": 1,
            "questions": 4,
            "accuracy": 0.25,
            "interval_95": [0.05, 0.7],
            "calls": calls,
            "tokens": 0,
            "cost_usd": 0.0,
            "wall_s": 1.0,
        }

    for most in (27, 9, 1, 0, 130):
        svg = accuracy_cost_svg({"council": line(most), "solo": line(4)})
        shown = ticks(svg)
        assert len(shown) == 5, svg
        assert all(re.fullmatch(r"\d+", tick) for tick in shown), shown
        values = [int(tick) for tick in shown]
        assert values[0] == 0 and values == sorted(set(values))
        assert values[-1] >= most / 4  # the highest point is on the plot
