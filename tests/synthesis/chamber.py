"""A stub-server council whose personas write long technical answers with code in them.

Persona answers are the scripted provider's, grown with numbered reasoning, key
lines and code blocks in ``` and ~~~ fences (backticks inside the code, fences
nested in longer ones); round-1 answers end in a fence that is never closed.
Cross-examination scores and the synthesizer's answer are chosen by the test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from council_run import request_task as request_task
from stub_server import StubResponse

from dreamcontext_council.engine.prompting.compression import find_fenced_blocks
from dreamcontext_council.engine.providers.scripted import scripted_text

BACKTICK_CODE = """```python
def session_key(user: str) -> str:
    # ## a comment, not a heading
    return f"`{user}`" + "``" + "```"
```"""
TILDE_CODE = """~~~sh
```
psql -c "select count(*) from sessions"  # backtick fence inside a tilde block
```
~~~"""
LONG_FENCE_CODE = """````markdown
```sql
CREATE TABLE sessions (id text primary key, data jsonb, expires_at timestamptz);
```
````"""
UNCLOSED_CODE = """~~~~text
trace that is never closed
- a bullet inside code
### a heading inside code"""
CODE_BLOCKS = (BACKTICK_CODE, TILDE_CODE, LONG_FENCE_CODE)

_SCORE_LINE = re.compile(r"^Score: \d+/10$", re.M)
_CLAIMS = re.compile(r"```claims\n.*?\n```", re.S)


def reasoning(persona: str, number: int, lines: int) -> str:
    """Numbered reasoning with key lines every few lines and the three code blocks."""
    out: list[str] = []
    for n in range(lines):
        if n % 9 == 4:
            out.append(f"- **Point {n}** for {persona} in round {number}: the rollback path.")
        elif n % 13 == 7:
            out.append(f"#### Detail {n} of {persona}")
        else:
            out.append(
                f"Line {n:03d} of {persona} R{number}: sessions expire after thirty minutes, "
                "so a dual-write window of two weeks covers every live session."
            )
        if n in (lines // 4, lines // 2, 3 * lines // 4):
            out += ["", CODE_BLOCKS[[lines // 4, lines // 2, 3 * lines // 4].index(n)], ""]
    return "\n".join(out)


def long_answer(task: dict[str, Any], score: int | None, lines: int) -> str:
    """The scripted answer, grown: long reasoning with code; round 1 ends in an open fence."""
    persona, number = str(task["persona"]), int(task["round"])
    text = scripted_text(task)
    text = text.replace(
        "### Reasoning\n", "### Reasoning\n" + reasoning(persona, number, lines) + "\n\n", 1
    )
    if score is not None:
        text = _SCORE_LINE.sub(f"Score: {score}/10", text)
    if number == 1:
        # After the last section, before the verdict block: it runs to the end of the entry.
        text = text.replace("\n```verdict\n", "\n" + UNCLOSED_CODE + "\n```verdict\n", 1)
    return text


def entry_body(answer: str) -> str:
    """What report.md must hold for an answer: the answer without its verdict block, and an
    answer that ends inside an open fence with that fence closed."""
    body = answer[: answer.rindex("\n```verdict\n")].strip("\n")
    return body + "\n~~~~" if body.endswith(UNCLOSED_CODE) else body


def with_claims(report: str, claims: list[dict[str, Any]] | None) -> str:
    """A scripted synthesis with its claims block replaced (or removed when None)."""
    block = "" if claims is None else "```claims\n" + json.dumps(claims, indent=1) + "\n```"
    return _CLAIMS.sub(lambda _: block, report)


@dataclass
class Chamber:
    """Answers every council call; records the task of each request in order."""

    scores: Mapping[str, int] = field(default_factory=dict)
    """Score each persona receives from its critic in round 2 (by the peer's slug)."""
    lines: int = 60
    """Reasoning lines added to every persona answer; 0 sends the plain scripted answers."""
    synthesis: Callable[[dict[str, Any], int], str | StubResponse] | None = None
    """(task, how many synthesis requests came before) → the synthesizer's answer."""
    on_synthesis: Callable[[], None] | None = None
    """Called when a synthesis request arrives, before it is answered."""
    tasks: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[tuple[str, int], str] = field(default_factory=dict)
    """The answer sent for each (persona, round)."""

    def __call__(self, request_json: dict[str, Any]) -> str | StubResponse:
        task = request_task(request_json)
        earlier = sum(1 for t in self.tasks if t.get("phase") == "synthesis")
        self.tasks.append(task)
        phase = task.get("phase")
        if phase == "synthesis" and self.on_synthesis is not None:
            self.on_synthesis()
        if phase == "synthesis" and self.synthesis is not None:
            return self.synthesis(task, earlier)
        if phase in ("opening", "cross-exam", "rebuttal") and not task.get("repair"):
            peer = task.get("peer")
            score = self.scores.get(str(peer)) if peer else None
            text = long_answer(task, score, self.lines) if self.lines else scripted_text(task)
            self.answers[(str(task["persona"]), int(task["round"]))] = text
            return text
        return scripted_text(task)


def code_blocks(text: str) -> list[str]:
    """Every fenced block of a text, verbatim, fences included."""
    return [text[b.start : b.end] for b in find_fenced_blocks(text)]
