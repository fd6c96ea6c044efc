"""Provider storms through the real anthropic and openai SDKs against the local stub server.

Whole debates run through `council run` while the server answers with 429s, 500s,
timeouts, dropped and truncated bodies, malformed JSON, empty answers and refusals. The
outcome must be a complete debate or a clean stop (exit 1, one `Error:` line, no
traceback) that a later `run <id>` finishes once the server is healthy again; no file is
ever corrupt and no persona answer on disk is asked for twice.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from stub_server import StubResponse, StubServer, prompt_text

from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
from dreamcontext_council.errors import EXIT_STOPPED

from .support import (
    LONG,
    Done,
    asked_twice,
    clean_env,
    debate_ids,
    no_traceback,
    problems,
    report,
    run_council,
)

TOPIC = "Should we migrate the session store from Redis to Postgres?"
KEY = "sk-test-faults-0123456789abcdef"
MODELS = {"anthropic": "anthropic:claude-haiku-4-5", "openai": "openai:gpt-4o-mini"}
TIMEOUT_S = 1.0
REFUSAL = "I'm sorry, but I can't help with that."

Fault = Callable[[str, str], StubResponse]  # (api, the answer it stands in for) -> response


def _refusal_field(api: str, answer: str) -> StubResponse:
    """The API's own refusal shape: OpenAI's `refusal` with no content, Anthropic's stop_reason."""
    if api == "openai":
        body: dict[str, Any] = {
            "id": "chatcmpl-refused",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "refusal": REFUSAL},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10},
        }
    else:
        body = {
            "id": "msg_refused",
            "type": "message",
            "role": "assistant",
            "model": "claude-haiku-4-5",
            "content": [],
            "stop_reason": "refusal",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 0},
        }
    return StubResponse.raw(json.dumps(body))


FAULTS: dict[str, Fault] = {
    "429": lambda api, answer: StubResponse.error(429, headers={"Retry-After": "0"}),
    "500": lambda api, answer: StubResponse.error(500, headers={"Retry-After": "0"}),
    "529-overloaded": lambda api, answer: StubResponse.error(529, headers={"Retry-After": "0"}),
    "timeout": lambda api, answer: StubResponse.slow(TIMEOUT_S * 4, answer),
    "dropped": lambda api, answer: StubResponse.dropped(),
    "truncated-body": lambda api, answer: StubResponse.cut_off(answer, keep_bytes=40),
    "truncated-json": lambda api, answer: StubResponse.raw('{"id": "x", "type": "mess'),
    "malformed-json": lambda api, answer: StubResponse.raw(
        "<html>502 Bad Gateway</html>", content_type="text/html"
    ),
    "wrong-schema": lambda api, answer: StubResponse.raw('{"unexpected": [1, 2, 3]}'),
    "empty": lambda api, answer: StubResponse.reply(""),
    "refusal-text": lambda api, answer: StubResponse.reply(REFUSAL),
    "refusal-field": _refusal_field,
    "answer-cut-short": lambda api, answer: StubResponse.reply(answer[: len(answer) // 2]),
    "no-verdict-block": lambda api, answer: StubResponse.reply(answer.split("```verdict")[0]),
}


@dataclass
class Storm:
    """A responder: scripted answers, with faults sent to a share of the attempts.

    The faults take turns (round robin over `kinds`), so one debate meets all of them.
    """

    api: str
    kinds: tuple[str, ...]
    rate: float
    seed: int
    phases: tuple[str, ...] = ()  # only these phases (all when empty)
    burst: int = 0  # the first attempts all get a fault, then `rate` of them
    offset: int = 0  # where in `kinds` the turns start
    calm: bool = False
    sent: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def __call__(self, request_json: dict[str, Any]) -> Any:
        task = task_from_text(prompt_text(request_json))
        answer = scripted_text(task) if task else "stub answer"
        with self._lock:
            if self.calm or (self.phases and task.get("phase") not in self.phases):
                return answer
            if len(self.sent) >= self.burst and self._rng.random() >= self.rate:
                return answer
            kind = self.kinds[(self.offset + len(self.sent)) % len(self.kinds)]
            self.sent.append(kind)
        return FAULTS[kind](self.api, answer)


def _roster(path: Path, count: int) -> str:
    slugs = ["risk-auditor", "growth-cfo", "user-advocate", "platform-lead"][:count]
    data = [
        {"slug": s, "aspects": ["risk", "cost"], "body": f"You are {s}; weigh risk and cost."}
        for s in slugs
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@dataclass
class Scenario:
    name: str
    kinds: tuple[str, ...]
    api: str
    rate: float = 0.5
    phases: tuple[str, ...] = ()
    personas: int = 3
    rounds: int = 2
    seed: int = 1
    retries: int = 3
    burst: int = 0
    offset: int = 0

    @property
    def outage(self) -> bool:
        return self.rate >= 1.0


def _run(scenario: Scenario, base: Path, stub: StubServer, *args: str) -> Done:
    model = MODELS[scenario.api]
    env = clean_env(base / "home")
    if scenario.api == "anthropic":
        env.update(ANTHROPIC_API_KEY=KEY, ANTHROPIC_BASE_URL=stub.url)
    else:
        env.update(OPENAI_API_KEY=KEY)
        args = (*args, "--base-url", stub.openai_url)
    common = ["--model", model, "--check-model", model, "--synth-model", model, "--quiet"]
    common += ["--timeout", str(TIMEOUT_S), "--retries", str(scenario.retries)]
    return run_council([*args, *common], env, base, timeout=300)


def weather(scenario: Scenario, base: Path) -> tuple[Done, Done | None, Storm]:
    """Run a debate through the storm, then resume it with the storm over if it stopped."""
    storm = Storm(
        scenario.api,
        scenario.kinds,
        scenario.rate,
        scenario.seed,
        scenario.phases,
        scenario.burst,
        scenario.offset,
    )
    root = base / "_dream_context"
    with StubServer(responder=storm) as stub:
        first = _run(
            scenario,
            base,
            stub,
            "run",
            "--topic",
            TOPIC,
            "--options",
            "A=Migrate now,B=Stay on Redis",
            "--personas",
            _roster(base / "roster.json", scenario.personas),
            "--rounds",
            str(scenario.rounds),
        )
        assert no_traceback(first), first.text
        assert first.code in (0, EXIT_STOPPED), first.text
        assert KEY not in first.text
        assert not problems(root), problems(root)
        if first.code == 0:
            assert "is complete" in first.out, first.text
            return first, None, storm
        errors = [line for line in first.err.splitlines() if line.startswith("Error: ")]
        assert len(errors) == 1, f"not one clear error line: {first.err}"
        ids = debate_ids(root)
        assert len(ids) == 1, "a stopped run leaves its debate to resume"
        storm.calm = True
        again = _run(scenario, base, stub, "run", ids[0])
        assert no_traceback(again), again.text
        assert again.code == 0, again.text
        return first, again, storm


ALL = tuple(FAULTS)
APIS = ("anthropic", "openai")


def _scenarios() -> list[Scenario]:
    # Mixed storms, one per SDK: a burst that sends half the kinds of fault each (so the two
    # send every kind), then a fault on a third of the attempts.
    half = len(ALL) - len(ALL) // 2
    found = [
        Scenario(f"mixed-{api}", ALL, api, 0.3, seed=n, burst=half, offset=n * half)
        for n, api in enumerate(APIS)
    ]
    if LONG:  # and each kind of fault alone, at two strengths, through both SDKs
        found += [
            Scenario(f"{kind}-{api}-{int(rate * 100)}", (kind,), api, rate, personas=4, rounds=3)
            for kind in FAULTS
            for api in APIS
            for rate in (0.4, 0.8)
        ]
        found += [
            Scenario(f"mixed-{api}-seed{seed}", ALL, api, 0.7, personas=4, rounds=3, seed=seed)
            for api in APIS
            for seed in range(2, 7)
        ]
    # Outages that must stop the run cleanly: in the opening round and in synthesis.
    found += [
        Scenario("outage-opening", ("500", "refusal-text"), "openai", 1.0, ("opening", "repair")),
        Scenario("outage-synthesis", ("429", "529-overloaded"), "anthropic", 1.0, ("synthesis",)),
    ]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("scenario", _scenarios(), ids=lambda s: s.name)
def test_a_storm_ends_in_a_complete_debate_or_a_clean_resumable_stop(
    scenario: Scenario, tmp_path: Path
) -> None:
    first, again, storm = weather(scenario, tmp_path)
    errors = [line for line in first.err.splitlines() if line.startswith("Error: ")]
    report(
        "storm",
        scenario=scenario.name,
        api=scenario.api,
        faults=dict(Counter(storm.sent)),
        first_run="complete" if first.code == 0 else "stopped",
        stop_message=errors[0][:160] if errors else "",
    )
    root = tmp_path / "_dream_context"
    if scenario.outage:
        assert first.code == EXIT_STOPPED, "a total outage must stop the run"
        assert again is not None
    folder = root / "council" / debate_ids(root)[0]
    assert not asked_twice(folder)
    assert not problems(root, complete=True)
    written = "".join(p.read_text("utf-8", "replace") for p in root.rglob("*") if p.is_file())
    assert KEY not in written
