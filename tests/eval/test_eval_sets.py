"""Sets a user brings, read as they are published: GSM8K's JSONL and a multiple-choice CSV
(with or without its header); and `eval --dry-run`, which estimates the eval's cost and
writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from council_run import Council

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.eval_formats import (
    STANCE_NOTE,
    parse_choice_csv,
    read_any_set,
)

GSM8K = [
    {
        "question": "Natalia sold clips to 48 of her friends in April, and then she sold half as "
        "many clips to her friends in May. How many clips did Natalia sell altogether?",
        "answer": "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n"
        "Natalia sold 48+24 = <<48+24=72>>72 clips altogether.\n#### 72",
    },
    {
        "question": "A shop sells 1,234 pens a day. How many does it sell in a day?",
        "answer": "It sells 1,234 pens.\n#### 1,234",
    },
]
CSV_ROWS = (
    '"Which gas do plants take in, mostly?",Oxygen,"Carbon dioxide, CO2",Nitrogen,Helium,B\n'
    "What is 2+2?,3,4,5,6,b\n"
)


def test_gsm8k_as_published(tmp_path: Path) -> None:
    text = "".join(json.dumps(line) + "\n" for line in GSM8K)
    questions, implied = read_any_set(text, "test.jsonl")
    assert implied == "number"
    assert [(q.id, q.answer, q.options) for q in questions] == [
        ("gsm8k-0001", "72", []),
        ("gsm8k-0002", "1234", []),
    ]
    assert questions[0].question == f"{GSM8K[0]['question']} {STANCE_NOTE}"
    bad = text + json.dumps({"question": "?", "answer": "no final answer"}) + "\n"
    with pytest.raises(UsageError, match=r"line 3: the answer does not end with `#### N`"):
        read_any_set(bad, "test.jsonl")
    # The eval's own JSONL is read as before.
    own = '{"id": "q1", "question": "?", "answer": "1"}\n'
    assert read_any_set(own, "set.jsonl")[1] is None


def test_a_multiple_choice_csv_with_or_without_its_header() -> None:
    plain = parse_choice_csv(CSV_ROWS, "q.csv")
    headed, implied = read_any_set("Question,A,B,C,D,Answer\n" + CSV_ROWS, "q.CSV")
    assert implied == "option" and headed == plain
    assert [(q.id, q.answer) for q in plain] == [("mc-0001", "B"), ("mc-0002", "B")]
    assert plain[0].question == "Which gas do plants take in, mostly?"
    assert [o["label"] for o in plain[0].options] == [
        "Oxygen",
        "Carbon dioxide, CO2",
        "Nitrogen",
        "Helium",
    ]
    with pytest.raises(UsageError, match=r"row 2 has 5 columns; a multiple-choice CSV has"):
        parse_choice_csv("Q,1,2,3,4,A\nQ,1,2,3,A\n", "q.csv")
    with pytest.raises(UsageError, match=r"row 1: the answer 'E' is not A, B, C or D"):
        parse_choice_csv("Q,1,2,3,4,E\n", "q.csv")


def test_a_gsm8k_eval_compares_numbers_and_a_bad_csv_writes_nothing(
    council: Council, tmp_path: Path
) -> None:
    path = tmp_path / "gsm8k.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in GSM8K[:1]), encoding="utf-8")
    done = council("eval", str(path), "--rounds", "1")
    assert done.code == 0, done.err
    [folder] = list((council.root / "evals").iterdir())
    assert json.loads((folder / "eval.json").read_text("utf-8"))["answer_type"] == "number"
    assert json.loads((folder / "set.jsonl").read_text("utf-8"))["answer"] == "72"
    bad = tmp_path / "bad.csv"
    bad.write_text("Q,1,2,3,4,Z\n", encoding="utf-8")
    before = council.tree()
    refused = council("eval", str(bad))
    assert refused.code != 0 and "the answer 'Z' is not A, B, C or D" in refused.err
    assert council.tree() == before


def test_dry_run_estimates_every_method_and_writes_nothing(
    council: Council, tmp_path: Path
) -> None:
    path = tmp_path / "gsm8k.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in GSM8K), encoding="utf-8")
    args = ("eval", str(path), "--model", "openai:gpt-4o-mini", "--dry-run", "--json")
    result = council(*args, "--samples", "3")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    # One solo call: 1,500 tokens in and 1,200 out at $0.15 and $0.60 a million.
    solo = (1500 * 0.15 + 1200 * 0.6) / 1e6
    assert data["methods"]["solo"] == {"calls": 2, "cost_usd": round(2 * solo, 6)}
    assert data["methods"]["self-consistency"] == {"calls": 6, "cost_usd": round(6 * solo, 6)}
    council_calls = data["methods"]["council"]["calls"]
    assert council_calls == 2 * (4 * 2 + 1)  # 4 personas, 2 rounds, the synthesis
    assert data["calls"] == council_calls + 8
    assert data["cost_usd"] == pytest.approx(sum(m["cost_usd"] for m in data["methods"].values()))
    assert data["message"].startswith("Dry run: 2 questions, up to 26 calls, estimated $")
    matched = json.loads(council(*args, "--samples", "match").out)
    per_question = matched["methods"]["council"]["cost_usd"] / 2
    # As many samples as the council's estimated spend affords.
    assert matched["methods"]["self-consistency"]["calls"] == 2 * int(per_question // solo)
    assert not council.root.exists()
