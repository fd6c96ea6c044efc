"""Public question sets as they are published, read into an eval set.

- GSM8K (Cobbe et al. 2021): JSONL lines `{"question": …, "answer": "…#### 72"}`; the
  number after `####` is the answer (its thousands commas dropped), compared as a number.
- A multiple-choice CSV (MMLU's layout): rows `question, A, B, C, D, answer` with the
  answer a letter A-D, with or without a header row naming those columns.
- Anything else: the eval's own JSONL (`rules/eval_set.parse_set`).
"""

from __future__ import annotations

import csv
import io
import json
import re

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.eval_set import (
    ARITHMETIC_QUESTION,
    EvalQuestion,
    json_lines,
    parse_set,
)

CHOICES = ("A", "B", "C", "D")
CSV_HEADER = ("question", "a", "b", "c", "d", "answer")
_FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)
# What a number question asks of the stance, as the arithmetic task says it.
STANCE_NOTE = ARITHMETIC_QUESTION.split("? ", 1)[1]


def is_gsm8k(text: str) -> bool:
    """Whether the first line is a GSM8K line: no id, and an answer ending `#### N`."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        data = json.loads(first)
    except ValueError:
        return False
    return (
        isinstance(data, dict)
        and "id" not in data
        and isinstance(data.get("answer"), str)
        and _FINAL.search(data["answer"]) is not None
    )


def parse_gsm8k(text: str, where: str) -> list[EvalQuestion]:
    """GSM8K's JSONL: ids `gsm8k-0001`…, the question with a note to state the number alone,
    the number after `####` as the answer. UsageError names the first line that is not one."""
    questions: list[EvalQuestion] = []
    for number, data in json_lines(text, where, "GSM8K has one object a line"):
        if not isinstance(data, dict) or not isinstance(data.get("question"), str):
            raise UsageError(f"{where} line {number} has no question; GSM8K lines have one.")
        final = _FINAL.search(str(data.get("answer") or ""))
        if final is None:
            raise UsageError(
                f"{where} line {number}: the answer does not end with `#### N`, as GSM8K's do."
            )
        question = data["question"].strip()
        questions.append(
            EvalQuestion(
                f"gsm8k-{len(questions) + 1:04d}",
                f"{question} {STANCE_NOTE}",
                final.group(1).replace(",", "").strip(),
            )
        )
    if not questions:
        raise UsageError(f"{where} holds no question.")
    return questions


def parse_choice_csv(text: str, where: str) -> list[EvalQuestion]:
    """A multiple-choice CSV: `question, A, B, C, D, answer`, the answer a letter A-D; a
    first row naming those columns is a header. Ids are `mc-0001`…"""
    rows = list(csv.reader(io.StringIO(text)))
    questions: list[EvalQuestion] = []
    for number, row in enumerate(rows, start=1):
        if not any(cell.strip() for cell in row):
            continue
        if number == 1 and tuple(c.strip().lower() for c in row) == CSV_HEADER:
            continue
        if len(row) != len(CSV_HEADER):
            raise UsageError(
                f"{where} row {number} has {len(row)} columns; a multiple-choice CSV has "
                "question, A, B, C, D, answer."
            )
        question, *labels, answer = (cell.strip() for cell in row)
        key = answer.upper()
        if key not in CHOICES:
            raise UsageError(f"{where} row {number}: the answer {answer!r} is not A, B, C or D.")
        if not question or not all(labels):
            raise UsageError(f"{where} row {number} has an empty question or option.")
        options = [{"key": k, "label": label} for k, label in zip(CHOICES, labels, strict=True)]
        questions.append(EvalQuestion(f"mc-{len(questions) + 1:04d}", question, key, options))
    if not questions:
        raise UsageError(f"{where} holds no question.")
    return questions


def read_any_set(text: str, where: str) -> tuple[list[EvalQuestion], str | None]:
    """The questions of a set file in any of the three forms, and the answer type its form
    implies (`number` for GSM8K, `option` for a CSV; None: the set's own default)."""
    if where.lower().endswith(".csv"):
        return parse_choice_csv(text, where), "option"
    if is_gsm8k(text):
        return parse_gsm8k(text, where), "number"
    return parse_set(text, where), None
