"""An eval set: questions with known answers, one JSON object a line, and how answers compare.

A line is `{"id": "q1", "question": "…", "options": {"A": "…", "B": "…"}, "answer": "A"}`,
or a free answer (`"answer": "42"`, no options) compared by the answer type: `number`
(the last number in the answer), `option` (an option key or its label) or `exact` (the
text, case and spacing aside). `generate_arithmetic` writes the Du et al. arithmetic task.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dreamcontext_council.errors import UsageError

ANSWER_TYPES = ("option", "number", "exact")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
ARITHMETIC_QUESTION = "What is the result of {expression}? State the number alone as your stance."


@dataclass(frozen=True)
class EvalQuestion:
    """One question of a set, with the answer that counts as right."""

    id: str
    question: str
    answer: str
    options: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "question": self.question}
        if self.options:
            data["options"] = {o["key"]: o["label"] for o in self.options}
        data["answer"] = self.answer
        return data


def json_lines(text: str, where: str, hint: str) -> Iterator[tuple[int, object]]:
    """Each non-blank line of a JSONL text with its line number; UsageError (ending with
    `hint`) names the first line that is not JSON."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError:
            raise UsageError(f"{where} line {number} is not JSON; {hint}.") from None


def parse_set(text: str, where: str = "the eval set") -> list[EvalQuestion]:
    """Every question of a JSONL set; UsageError names the first bad line."""
    questions: list[EvalQuestion] = []
    seen: set[str] = set()
    for number, data in json_lines(text, where, "write one object a line"):
        question = _question(data, f"{where} line {number}")
        if question.id in seen:
            raise UsageError(
                f"{where} line {number} repeats the id {question.id!r}; ids must differ."
            )
        seen.add(question.id)
        questions.append(question)
    if not questions:
        raise UsageError(f"{where} holds no question; write one JSON object a line.")
    return questions


def _question(data: Any, where: str) -> EvalQuestion:
    if not isinstance(data, dict):
        raise UsageError(f"{where} is not a JSON object with id, question and answer.")
    missing = [k for k in ("id", "question", "answer") if k not in data]
    if missing:
        raise UsageError(
            f"{where} lacks {', '.join(missing)}; each line needs id, question, answer."
        )
    qid, question, answer = (str(data[k]).strip() for k in ("id", "question", "answer"))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", qid):
        raise UsageError(
            f"{where} has the id {qid!r}; use letters, digits, '_', '.', '-' (64 at most)."
        )
    if not question:
        raise UsageError(f"{where} has an empty question.")
    raw_options = data.get("options") or {}
    if not isinstance(raw_options, dict):
        raise UsageError(f'{where}: options must be an object like {{"A": "…"}}.')
    options = [{"key": str(k).strip(), "label": str(v).strip()} for k, v in raw_options.items()]
    if options and normalise(answer, "option", options) is None:
        raise UsageError(f"{where}: the answer {answer!r} is not one of its options.")
    return EvalQuestion(qid, question, answer, options)


def answer_type_of(questions: list[EvalQuestion], given: str | None) -> str:
    """The answer type asked for, else `option` for a set with options and `exact` without."""
    if given:
        if given not in ANSWER_TYPES:
            raise UsageError(
                f"--answer-type must be one of {', '.join(ANSWER_TYPES)}, not {given}."
            )
        return given
    return "option" if all(q.options for q in questions) else "exact"


def normalise(text: str | None, answer_type: str, options: list[dict[str, str]]) -> str | None:
    """The comparable form of an answer, or None when it has none (no number, no option)."""
    if text is None:
        return None
    cleaned = " ".join(str(text).split())
    if answer_type == "number":
        found = _NUMBER.findall(cleaned)
        if not found:
            return None
        try:
            value = float(found[-1].replace(",", ""))
        except ValueError:
            return None
        if not math.isfinite(value):
            return None
        return str(int(value)) if value == int(value) else repr(value)
    if answer_type == "option":
        folded = cleaned.strip("*`. ").casefold()
        for option in options:
            if folded in (option["key"].casefold(), option["label"].casefold()):
                return option["key"]
        return None if options else folded or None
    return cleaned.casefold() or None


def is_right(given: str | None, question: EvalQuestion, answer_type: str) -> bool:
    """Whether an answer matches the question's known answer under the answer type."""
    got = normalise(given, answer_type, question.options)
    return got is not None and got == normalise(question.answer, answer_type, question.options)


def arithmetic_expression(rng: random.Random) -> tuple[str, int]:
    """`a+b*c+d-e*f` with six numbers from 0 to 30, and its value (Du et al., 2023)."""
    a, b, c, d, e, f = (rng.randint(0, 30) for _ in range(6))
    return f"{a}+{b}*{c}+{d}-{e}*{f}", a + b * c + d - e * f


def generate_arithmetic(count: int, seed: int) -> list[EvalQuestion]:
    """`count` arithmetic questions, the same for the same seed."""
    if count < 1:
        raise UsageError(f"--generate arithmetic needs a count of at least 1, not {count}.")
    rng = random.Random(seed)
    questions = []
    for number in range(1, count + 1):
        expression, value = arithmetic_expression(rng)
        questions.append(
            EvalQuestion(
                f"arith-{number:04d}", ARITHMETIC_QUESTION.format(expression=expression), str(value)
            )
        )
    return questions


def render_set(questions: list[EvalQuestion]) -> str:
    """The JSONL text of a set."""
    return "".join(json.dumps(q.to_json(), ensure_ascii=False) + "\n" for q in questions)
