"""A key a model, a server or a `command:` program echoes in its answer is hidden before the
answer is stored, parsed or printed: no file under the root and no output carries it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from council_run import Council, request_task, roster_file, scripted_responder
from debate_story import OPTIONS, TOPIC, Result
from offline import no_provider_environment as no_provider_environment  # autouse here
from stub_server import StubServer

from dreamcontext_council.engine.providers.keys import answer_keys, hide_keys
from dreamcontext_council.engine.providers.registry import ProviderSet, ProviderSettings

from .command_consent_support import workspace

OPENAI_KEY = "sk-proj-ECHOEDKEY-1a2b3c4d5e6f"
GATEWAY_KEY = "gw-ECHOEDKEY-77aa88bb99cc"  # not shaped like any known key
URL_PASSWORD = "pw-ECHOEDKEY-2468"
MARKER = "ECHOEDKEY"

LEAKY_SCRIPT = """\
import os, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
print(scripted_text(task_from_text(sys.stdin.read())))
print("Debug: OPENAI_API_KEY=" + os.environ["OPENAI_API_KEY"] + " gateway " + os.environ["MY_GATEWAY_API_KEY"])
"""


def leaky_responder(request_json: dict[str, Any]) -> str:
    """A server whose every answer quotes the keys back, as an injected prompt could ask."""
    if request_task(request_json).get("phase") == "persona-generation":
        return json.dumps(
            [
                {
                    "slug": slug,
                    "aspects": ["risk"],
                    "body": f"You are {slug}; my key is {OPENAI_KEY}.",
                }
                for slug in ("first-voice", "second-voice")
            ]
        )
    said = f"Keys I saw: {OPENAI_KEY}, {GATEWAY_KEY}, {URL_PASSWORD}."
    return scripted_responder(request_json).replace("\n", f"\n{said}\n", 1) + f"\n{said}\n"


@pytest.fixture
def council(tmp_path: Path) -> Council:
    return workspace(tmp_path)


def leaks(council: Council, outputs: list[Result]) -> list[str]:
    found = [
        str(path)
        for path in council.root.rglob("*")
        if path.is_file() and MARKER.encode() in path.read_bytes()
    ]
    return found + [f"output {i}" for i, r in enumerate(outputs) if MARKER in r.out + r.err]


def reading_outputs(council: Council, debate_id: str) -> list[Result]:
    return [
        council.proc(*args)
        for args in (
            ("show", debate_id),
            ("export", debate_id, "--format", "md", "-o", "-"),
            ("export", debate_id, "--format", "json", "-o", "-"),
            ("export", debate_id, "--format", "html", "-o", "-"),
        )
    ]


@pytest.mark.parametrize("personas", ["roster", "auto"])
def test_keys_echoed_in_answers_reach_no_file_and_no_output(
    council: Council, tmp_path: Path, personas: str
) -> None:
    script = tmp_path / "leaky_persona.py"
    script.write_text(LEAKY_SCRIPT, encoding="utf-8")
    spec = (
        roster_file(
            tmp_path / "roster.json",
            {"gpt-voice": "openai:gpt-stub", "local-voice": f"command:{sys.executable} {script}"},
        )
        if personas == "roster"
        else "auto"
    )
    with StubServer(responder=leaky_responder) as stub:
        base_url = stub.openai_url.replace("http://", f"http://gateway:{URL_PASSWORD}@")
        run = council.proc(
            "run", "--topic", TOPIC, "--options", OPTIONS, "--personas", spec,
            "--rounds", "3", "--model", "openai:gpt-stub", "--base-url", base_url,
            env={"OPENAI_API_KEY": OPENAI_KEY, "MY_GATEWAY_API_KEY": GATEWAY_KEY},
        )  # fmt: skip
        answered = len(stub.requests)

    assert run.code == 0, run.err
    debate_id = run.last_line
    phases = {r["phase"] for r in council.usage(debate_id) if r["outcome"] == "ok"}
    assert {"opening", "synthesis"} <= phases
    assert answered > 0
    assert leaks(council, [run, *reading_outputs(council, debate_id)]) == []
    assert "[redacted]" in council.text(debate_id, "synthesis-input.md")


def test_credentials_in_a_base_url_are_keys_too() -> None:
    url = "https://proxy-user:pw-4242-secret@llm.example/v1?api-key=q-ECHOEDKEY-99&region=eu"
    providers = ProviderSet(
        ProviderSettings(base_urls={"openai": url}),
        env={"ANTHROPIC_BASE_URL": "https://tok-ECHOEDKEY-55@gw.example", "OTHER": "eu-west"},
    )

    keys = providers.answer_keys()
    shown = hide_keys(f"{url} said pw-4242-secret, q-ECHOEDKEY-99 and tok-ECHOEDKEY-55 in eu", keys)

    assert MARKER not in shown and "pw-4242-secret" not in shown
    assert shown.endswith("in eu")  # only credentials go, not the rest of the URL
    assert answer_keys([{"SHORT_API_KEY": "abc"}], []) == ()  # too short to be a key
