"""A debate remembers how it is run: a bare `run <id>` goes on with the models and settings the
run started with, never on the default model; an option given to a resume wins and is recorded."""

from __future__ import annotations

import sys
from pathlib import Path

from stub_server import StubServer

from dreamcontext_council.errors import EXIT_STOPPED
from dreamcontext_council.folder import frontmatter_io

from .support import OPTIONS, TOPIC, Council, openai_env

TEST_KEY = "sk-remembered-run-0123456789abcdef"

# Exits 3 while its state file says the provider is down, else answers like the scripted one.
FLAKY_SCRIPT = """\
import pathlib, sys
from dreamcontext_council.engine.providers.scripted import scripted_text, task_from_text
prompt = sys.stdin.read()
if pathlib.Path(sys.argv[1]).exists():
    sys.stderr.write("provider down\\n")
    sys.exit(3)
print(scripted_text(task_from_text(prompt)))
"""


def flaky_command(tmp_path: Path, down: Path) -> str:
    script = tmp_path / "flaky_persona.py"
    script.write_text(FLAKY_SCRIPT, encoding="utf-8")
    return f"command:{sys.executable} {script} {down}"


def persona_models(council: Council, debate_id: str) -> dict[str, str]:
    folder = council.folder(debate_id)
    found = {}
    for slug in council.meta(debate_id)["personas"]:
        text = (folder / slug / "context-and-persona.md").read_text(encoding="utf-8")
        meta, _ = frontmatter_io.parse(text, "context-and-persona.md")
        found[slug] = meta["model"]
    return found


def test_a_bare_resume_goes_on_with_the_command_model_it_started_with(
    council: Council, tmp_path: Path
) -> None:
    down = tmp_path / "provider-down"
    down.write_text("down", encoding="utf-8")
    model = flaky_command(tmp_path, down)
    # A key in the environment: the default model would be openai, never to be used here.
    env = {"OPENAI_API_KEY": TEST_KEY}
    args = ("--rounds", "2", "--timeout", "30", "--retries", "0", "--max-calls", "40")
    first = council.proc(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--model", model, *args, env=env
    )
    assert first.code != 0, first.err
    debate_id = council.only_id()
    assert council.status(debate_id) != "complete"
    down.unlink()  # the provider is back

    again = council.proc("run", debate_id, env=env)

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    usage = council.usage(debate_id)
    assert {r["provider"] for r in usage} == {"command"}, usage
    assert set(persona_models(council, debate_id).values()) == {model}
    run = council.meta(debate_id)["run"]
    assert run["model"] == model
    assert (run["timeout"], run["retries"], run["max_calls"]) == (30, 0, 40)
    assert TEST_KEY not in council.text(debate_id, "debate.md")


def test_a_resume_never_falls_back_to_the_default_provider(council: Council) -> None:
    first = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--max-calls", "1"
    )
    debate_id = council.only_id()
    assert council.meta(debate_id)["run"]["model"] == "scripted", first.err

    # A key appears: the default would now be openai, but the debate ran on scripted.
    again = council("run", debate_id, env={"OPENAI_API_KEY": TEST_KEY})

    assert again.code == EXIT_STOPPED, again.err
    assert {r["provider"] for r in council.usage(debate_id)} == {"scripted"}


def test_an_option_given_to_a_resume_wins_and_is_recorded(
    council: Council, stub: StubServer
) -> None:
    first = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2", "--max-calls", "2",
        "--window", "5000",
    )  # fmt: skip
    debate_id = council.only_id()
    assert first.code == EXIT_STOPPED, first.err
    url = stub.url

    again = council(
        "run", debate_id, "--model", "openai:gpt-4o-mini", "--base-url", url,
        "--window", "8000", env={"OPENAI_API_KEY": TEST_KEY},
    )  # fmt: skip

    assert again.code == EXIT_STOPPED, again.err
    usage = council.usage(debate_id)
    assert {r["provider"] for r in usage[2:]} == {"openai"}, usage
    assert set(persona_models(council, debate_id).values()) == {"openai:gpt-4o-mini"}
    run = council.meta(debate_id)["run"]
    assert (run["model"], run["base_url"], run["window"], run["max_calls"]) == (
        "openai:gpt-4o-mini",
        url,
        8000,
        2,
    )


def test_a_persona_that_named_its_own_model_keeps_it_when_model_changes(
    council: Council, echo_command: str, stub: StubServer
) -> None:
    debate_id = council.new_debate("--rounds", "1")
    council.add_persona(debate_id, "risk-auditor", model=echo_command)
    council.add_persona(debate_id, "growth-cfo")
    first = council("run", debate_id, "--max-calls", "1", "--concurrency", "1")
    assert persona_models(council, debate_id) == {
        "risk-auditor": echo_command,
        "growth-cfo": "scripted",
    }, first.err

    url = stub.url
    again = council("run", debate_id, "--model", "openai:gpt-4o-mini", env=openai_env(url))

    assert again.code == EXIT_STOPPED, again.err
    assert persona_models(council, debate_id) == {
        "risk-auditor": echo_command,
        "growth-cfo": "openai:gpt-4o-mini",
    }


def test_a_recorded_provider_without_its_key_is_refused_up_front(
    council: Council, stub: StubServer
) -> None:
    first = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--max-calls", "0",
        "--model", "sonnet", env={"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": stub.url},
    )  # fmt: skip
    debate_id = council.only_id()
    assert council.meta(debate_id)["run"]["model"] == "sonnet", first.err
    before = council.tree()

    again = council("run", debate_id)

    assert again.code == 2
    [line] = again.err.strip().splitlines()
    assert "sonnet" in line and "set ANTHROPIC_API_KEY" in line and "--model" in line, line
    assert council.tree() == before


def test_a_base_url_is_recorded_without_its_credentials(council: Council, stub: StubServer) -> None:
    url = stub.url
    secret = "url-secret-0123456789"
    with_secret = url.replace("://", f"://user:{secret}@") + f"?api-key={secret}"
    result = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "1", "--max-calls", "0",
        "--model", "openai:gpt-4o-mini", "--base-url", with_secret,
    )  # fmt: skip
    debate_id = council.only_id()
    text = council.text(debate_id, "debate.md")
    assert secret not in text, result.err
    assert council.meta(debate_id)["run"]["base_url"] == url

    again = council("run", debate_id)

    assert again.code == 2
    assert "--base-url" in again.err and secret not in again.err


def test_a_dry_run_plans_with_the_recorded_models_and_the_options_given(
    council: Council,
) -> None:
    council("run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "2", "--max-calls", "1")
    debate_id = council.only_id()
    env = {"OPENAI_API_KEY": TEST_KEY}

    bare = council("run", debate_id, "--dry-run", "--json", env=env).json()["plan"]
    moved = council(
        "run", debate_id, "--dry-run", "--json", "--model", "openai:gpt-4o-mini", env=env
    ).json()["plan"]

    assert {call["model"] for call in bare} == {"scripted"}
    assert {call["model"] for call in moved} == {"openai:gpt-4o-mini"}


def rewrite_run_settings(council: Council, debate_id: str, run: dict[str, object]) -> None:
    path = council.folder(debate_id) / "debate.md"
    meta, body = frontmatter_io.parse(path.read_text(encoding="utf-8"), "debate.md")
    path.write_text(frontmatter_io.render({**meta, "run": run}, body), encoding="utf-8")


def test_a_run_setting_out_of_range_is_refused_with_its_name(council: Council) -> None:
    debate_id = council.new_debate("--rounds", "1")
    council.add_persona(debate_id, "risk-auditor")
    rewrite_run_settings(council, debate_id, {"model": "scripted", "retries": 99})
    before = council.tree()

    result = council("run", debate_id)

    assert result.code != 0
    assert "run.retries" in result.err and "99" in result.err
    assert council.tree() == before


def test_a_command_model_in_the_run_settings_needs_consent(
    council: Council, tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "marker.py"
    script.write_text(
        f"import pathlib, sys; pathlib.Path({str(marker)!r}).write_text('x'); print('A')",
        encoding="utf-8",
    )
    debate_id = council.new_debate("--rounds", "3")
    council.add_persona(debate_id, "risk-auditor", model="scripted")
    # A folder from elsewhere whose recorded check model is a program.
    rewrite_run_settings(
        council,
        debate_id,
        {"model": "scripted", "check_model": f"command:{sys.executable} {script}"},
    )
    before = council.tree()

    result = council.proc("run", debate_id, "--yes")

    assert result.code == 2, result.err
    assert "--allow-command" in result.err and "run.check_model" in result.err
    assert council.tree() == before
    assert not marker.exists()


def test_compact_early_stop_and_the_answer_cap_are_remembered(council: Council) -> None:
    first = council(
        "run", "--topic", TOPIC, "--options", OPTIONS, "--rounds", "3", "--compact",
        "--early-stop", "--max-answer-kb", "64", "--max-calls", "2",
    )  # fmt: skip
    debate_id = council.only_id()
    assert first.code == EXIT_STOPPED, first.err
    run = council.meta(debate_id)["run"]
    assert (run["compact"], run["early_stop"], run["max_answer_kb"]) == (True, True, 64)

    again = council("run", debate_id, "--max-calls", "100")  # the cap is remembered too

    assert again.code == 0, again.err
    assert council.status(debate_id) == "complete"
    # Compact: two rounds and no check, although three were planned.
    assert council.meta(debate_id)["current_round"] == 2
    assert "check" not in {r["phase"] for r in council.usage(debate_id)}


def test_a_flag_setting_that_is_not_true_or_false_is_refused(council: Council) -> None:
    debate_id = council.new_debate("--rounds", "1")
    council.add_persona(debate_id, "risk-auditor")
    rewrite_run_settings(council, debate_id, {"model": "scripted", "compact": "yes please"})
    before = council.tree()

    result = council("run", debate_id)

    assert result.code != 0
    assert "run.compact" in result.err
    assert council.tree() == before
