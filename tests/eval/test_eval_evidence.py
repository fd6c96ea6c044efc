"""`council eval --samples match` through the CLI, as a process, on four seats whose every
answer is known (tests/eval/seat_stub.py): one always right, one that copies it, one
always wrong, one that flips to the majority in round 2. Every figure of results.json,
results.md and the eval page is checked against values worked out by hand.

The set: four questions whose values are 9, 10, 23 and 24 (odd, even, odd, even).

- Round 1: right and copier are right everywhere, wrong nowhere, flipper on the odd ones.
  Round 2: the flipper takes the majority (the right value) on q2 and q4.
- The council (summed conviction of round 2): 4/4. The round-1 vote: 4/4.
- The weighted vote of round 2: right 0.1 + copier 0.1 + flipper 0.5 = 0.7 against wrong's
  1.0 (conviction 100) on the even values, 0.3 (conviction 70) on the odd: 2/4.
- The solo answer is right on the even values, every sample on the odd: 2/4 each.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from council_run import Council

from dreamcontext_council.evaluation.page import build_eval_page, eval_html
from dreamcontext_council.folder.paths import Root

STUB = Path(__file__).parent / "seat_stub.py"
VALUES = {"q1": ("1+2*3+4-1*2", 9), "q2": ("2+2*3+4-1*2", 10)}
VALUES |= {"q3": ("3+4*5+6-2*3", 23), "q4": ("4+4*5+6-2*3", 24)}
SOLO_CALLERS = ("(baseline)", "(self-consistency)")


def the_set(path: Path) -> Path:
    lines = [
        {
            "id": qid,
            "question": f"What is the result of {expr}? State the number alone as your stance.",
            "answer": str(value),
        }
        for qid, (expr, value) in VALUES.items()
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def tokens(record: dict[str, Any]) -> int:
    keys = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")
    return sum(int(record.get(k) or 0) for k in keys)


def test_the_council_against_a_vote_at_equal_cost(council: Council, tmp_path: Path) -> None:
    command = f"{sys.executable} {STUB}"
    other = f"{command} other"  # the same program under another name: a second family
    roster = tmp_path / "roster.json"
    models = {"right": command, "copier": command, "wrong": other, "flipper": other}
    roster.write_text(
        json.dumps(
            [
                {"slug": s, "body": f"You are {s}.", "model": f"command:{m}"}
                for s, m in models.items()
            ]
        ),
        encoding="utf-8",
    )
    log = tmp_path / "calls.jsonl"
    args = (
        "eval",
        str(the_set(tmp_path / "set.jsonl")),
        "--answer-type",
        "number",
        "--personas",
        str(roster),
        "--model",
        f"command:{command}",
        "--allow-command",
        command,
        "--allow-command",
        other,
        "--samples",
        "match",
    )
    result = council.proc(*args, env={"EVAL_STUB_LOG": str(log)}, timeout=300)
    assert result.code == 0, result.err
    [folder] = list((council.root / "evals").iterdir())
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    debates = json.loads((folder / "debates.json").read_text(encoding="utf-8"))
    methods = data["methods"]

    # -- accuracy, and the spend per question of each method --------------------------
    assert {m: (s["right"], s["questions"]) for m, s in methods.items()} == {
        "council": (4, 4),
        "solo": (2, 4),
        "vote": (4, 4),
        "weighted": (2, 4),
        "self-consistency": (2, 4),
    }
    assert [row["right"]["weighted"] for row in data["rows"]] == [True, False, True, False]
    assert [row["right"]["solo"] for row in data["rows"]] == [False, True, False, True]
    for s in methods.values():
        assert s["tokens_per_question"] == round(s["tokens"] / 4, 1)
        assert s["cost_per_question"] == 0.0 and s["accuracy_per_dollar"] is None

    # -- equal budgets: as many samples as the council's tokens afford ----------------
    sampled = 0
    for row in data["rows"]:
        usage = council.usage(debates[row["id"]])
        spent = sum(tokens(r) for r in usage if r["persona"] not in SOLO_CALLERS)
        samples = [r for r in usage if r["persona"] == "(self-consistency)"]
        expected = math.floor(spent / tokens(samples[0]))  # priced by the first sample
        assert 1 < expected < 50
        assert row["samples"] == len(samples) == expected
        budget = json.loads((folder / "answers" / f"{row['id']}.budget.json").read_text())
        assert budget == {
            "samples": expected,
            "measure": "tokens",
            "council": spent,
            "sample": tokens(samples[0]),
        }
        sampled += expected
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert sum(1 for c in calls if c[3]) == sampled == methods["self-consistency"]["calls"]
    # The same command again draws no sample and asks no call: the numbers were written.
    again = council.proc(*args, env={"EVAL_STUB_LOG": str(log)}, timeout=300)
    assert again.code == 0, again.err
    assert len(log.read_text(encoding="utf-8").splitlines()) == len(calls)
    assert json.loads((folder / "results.json").read_text("utf-8"))["methods"] == methods

    # -- the council against each method, paired ---------------------------------------
    paired = data["comparisons"]
    assert (paired["seed"], paired["resamples"]) == (20240601, 10_000)
    ratio = {m: methods["council"]["tokens"] / methods[m]["tokens"] for m in paired["methods"]}
    # council − solo per question: 1, 0, 1, 0 → +50 points, [0, 100], McNemar p = 2/2**2.
    halves = {"difference": 0.5, "interval_95": [0.0, 1.0], "council_only": 2}
    halves |= {"method_only": 0, "mcnemar_p": 0.5, "ratio_of": "tokens"}
    level = {"difference": 0.0, "interval_95": [0.0, 0.0], "council_only": 0}
    level |= {"method_only": 0, "mcnemar_p": 1.0, "ratio_of": "tokens"}
    expected_paired = {
        "solo": halves,
        "vote": level,
        "weighted": halves,
        "self-consistency": halves,
    }
    for method, figures in expected_paired.items():
        assert paired["methods"][method] == {
            **figures,
            "cost_ratio": round(ratio[method], 3),
            "conclusion": paired["methods"][method]["conclusion"],
        }
    assert paired["methods"]["vote"]["conclusion"] == (
        f"the council and the round-1 vote did not differ: 0 points [0, 0] at "
        f"{ratio['vote']:.1f}× the tokens."
    )
    assert paired["methods"]["weighted"]["conclusion"] == (
        f"the council and the weighted vote did not differ: +50 points [0, 100] at "
        f"{ratio['weighted']:.1f}× the tokens."
    )
    # Equal budgets: self-consistency spent what the council did, give or take a sample.
    assert 0.9 < ratio["self-consistency"] < 1.2

    # -- what the rounds did: the flipper moved wrong→right on q2 and q4 --------------
    assert data["flips"]["rounds"] == [
        {"round": 2, "right_to_wrong": 0, "wrong_to_right": 2, "wrong_to_wrong": 0}
    ]
    movers: Counter[str] = Counter()
    for qid in ("q2", "q4"):
        pairs = council.meta(debates[qid])["cross_examination"]
        [critic] = [c for c, peer in pairs.items() if peer == "flipper"]
        # The critic held the majority's value only if it was right or its copy.
        movers[critic if critic in ("right", "copier") else "(majority)"] += 1
    assert data["flips"]["movers"] == [
        {"round": 2, "by": by, "persona": "flipper", "direction": "wrong→right", "count": n}
        for by, n in sorted(movers.items())
    ]

    # -- effective votes: right and copier are one vote --------------------------------
    assert data["votes"] == {
        "questions": 4,
        "seats": 4,
        "mean_correlation": 0.1667,  # 1 pair of 6 correlated
        "effective": 2.6667,  # 4 / (1 + 3/6)
        "families": [
            {
                "family": f"command:{command}",
                "seats": ["copier", "right"],
                "mean_correlation": 1.0,
                "effective": 1.0,
            },
            {
                "family": f"command:{other}",
                "seats": ["flipper", "wrong"],
                "mean_correlation": 0.0,
                "effective": 2.0,
            },
        ],
    }

    # -- each seat: round 1, the last round with its Wilson interval, its spend ---------
    seats = {s["persona"]: s for s in data["seats"]}
    four, none = [0.5101, 1.0], [0.0, 0.4899]  # Wilson 95% for 4/4 and 0/4
    assert {p: (s["first_right"], s["right"], s["interval_95"]) for p, s in seats.items()} == {
        "copier": (4, 4, four),
        "flipper": (2, 4, four),
        "right": (4, 4, four),
        "wrong": (0, 0, none),
    }
    for slug, seat in seats.items():
        spent = [r for d in debates.values() for r in council.usage(d) if r["persona"] == slug]
        assert seat["calls"] == len(spent) == 8  # two rounds, four questions
        assert seat["tokens"] == sum(tokens(r) for r in spent)

    # -- results.md and the eval page show the same -----------------------------------
    markdown = (folder / "results.md").read_text(encoding="utf-8")
    assert (
        f"| Round-1 majority vote | 0 | [0, 0] | 0 | 0 | 1.000 | {ratio['vote']:.1f}× tokens |"
        in markdown
    )
    assert "| 2 | 0 | 2 | 0 |" in markdown
    assert "The council's 4 seats are worth **2.67** independent votes (ρ̄ = 0.17)." in markdown
    assert "| wrong | command:" in markdown and "| 0/4 | 0/4 (0%) | 0%–49% | 8 |" in markdown
    assert markdown.index("## The council against each method") < markdown.index("## Questions")
    page = eval_html(build_eval_page(Root(council.root), folder.name))
    for c in paired["methods"].values():
        assert c["conclusion"] in page
    assert 'id="comparison-weighted"' in page and "<td>[0, 100]</td>" in page
    assert "worth <strong>2.67</strong> independent votes" in page
    assert '<tr class="flip-row" id="flips-2"><td class="num">2</td><td class="num">0</td>' in page
