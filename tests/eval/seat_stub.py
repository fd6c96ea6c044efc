"""A `command:` model whose every answer is known, for the eval's figures.

It reads the prompt on stdin as a model would (`task_from_text`), answers in the persona
contract (`scripted_text`), and sets the stance and conviction by the seat it plays, for
questions "What is the result of EXPR?" whose value V it computes:

- `right`: V, conviction 60.
- `copier`: in round 1 (blind) V as `right` has it; later, the stance `right` took in the
  round before, read from the prompt. Conviction 60.
- `wrong`: V + 1, conviction 100 when V is even, else 70.
- `flipper`: in round 1 V when V is odd, else V + 2; later the majority of the stances the
  prompt shows for the round before (its own among them). Conviction 85.
- the solo answer: V when V is even, else V + 3; every self-consistency sample: V when V
  is odd, else V + 3.

Each summary says `<seat> backs <stance> (` as the scripted stand-in's do, which is how
the copier and the flipper read the others. Each call is logged to $EVAL_STUB_LOG.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections import Counter

from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text

PERSONA_PHASES = ("opening", "cross-exam", "rebuttal")


def value_of(topic: str) -> int | None:
    found = re.search(r"result of ([0-9+*-]+)\?", topic)
    if not found:
        return None
    a, b, c, d, e, f = map(int, re.findall(r"\d+", found.group(1)))
    return a + b * c + d - e * f


def said(prompt: str) -> dict[str, int]:
    """seat → the stance its summary in the prompt backs (the last one given wins)."""
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\S+) backs (-?\d+) \(", prompt)}


def stance_and_conviction(task: dict[str, object], value: int, prompt: str) -> tuple[int, int]:
    persona, number = task.get("persona"), int(str(task.get("round") or 1))
    if task.get("sample"):
        return (value if value % 2 else value + 3), 70
    if persona == "(baseline)":
        return (value if value % 2 == 0 else value + 3), 70
    if persona == "right":
        return value, 60
    if persona == "copier":
        return (value if number == 1 else said(prompt).get("right", value)), 60
    if persona == "wrong":
        return value + 1, 100 if value % 2 == 0 else 70
    if persona == "flipper":
        if number == 1:
            return (value if value % 2 else value + 2), 85
        counts = Counter(said(prompt).values())
        return max(counts, key=lambda s: (counts[s], -s)), 85
    return value, 50


def main() -> None:
    prompt = sys.stdin.read()
    task = task_from_text(prompt)
    with open(os.environ["EVAL_STUB_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps([task.get(k) for k in ("persona", "round", "phase", "sample")]))
        log.write("\n")
    answer = scripted_text(task)
    value = value_of(str(task.get("topic") or ""))
    if value is not None and task.get("phase") in (*PERSONA_PHASES, "baseline"):
        stance, conviction = stance_and_conviction(task, value, prompt)
        persona = task.get("persona")
        answer = re.sub(r"^stance: .*$", f"stance: {stance}", answer, flags=re.M)
        answer = re.sub(r"^conviction: .*$", f"conviction: {conviction}", answer, flags=re.M)
        answer = re.sub(
            r"(### Executive Summary\n).*",
            rf"\g<1>{persona} backs {stance} ({stance}) in round {task.get('round')}.",
            answer,
        )
    print(answer)


if __name__ == "__main__":
    main()
