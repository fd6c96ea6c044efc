"""One debate, four providers: anthropic and openai through their SDKs at the stub server,
a command persona, and the scripted one."""

from __future__ import annotations

from pathlib import Path

from stub_server import StubServer

from dreamcontext_council.engine.providers.models import parse_model

from .support import OPTIONS, TEST_KEY, TOPIC, Council, request_task, roster_file


def test_a_debate_mixes_providers(
    council: Council, stub: StubServer, tmp_path: Path, echo_command: str
) -> None:
    models = {
        "claude-voice": "sonnet",
        "gpt-voice": "openai:gpt-4o-mini",
        "local-voice": echo_command,
        "offline-voice": "scripted",
    }
    env = {
        "ANTHROPIC_API_KEY": TEST_KEY,
        "ANTHROPIC_BASE_URL": stub.url,
        "OPENAI_API_KEY": TEST_KEY,
        "OPENAI_BASE_URL": stub.openai_url,
    }

    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster_file(tmp_path / "roster.json", models),
        "--rounds",
        "2",
        env=env,
    )

    assert result.code == 0, result.err
    debate_id = result.last_line
    assert council.status(debate_id) == "complete"
    assert "No API key is set" not in result.err  # keys are set
    assert "Some calls go to the built-in scripted provider" in result.err
    records = council.usage(debate_id)
    providers = {r["persona"]: r["provider"] for r in records if r["phase"] == "opening"}
    assert providers == {
        "claude-voice": "anthropic",
        "gpt-voice": "openai",
        "local-voice": "command",
        "offline-voice": "scripted",
    }
    sonnet = parse_model("sonnet").model
    claude_calls = [r for r in records if r["persona"] == "claude-voice"]
    assert {r["model"] for r in claude_calls} == {sonnet}
    # With an Anthropic key the synthesizer defaults to sonnet too.
    [synthesis] = [r for r in records if r["phase"] == "synthesis"]
    assert (synthesis["provider"], synthesis["model"]) == ("anthropic", sonnet)

    by_api: dict[str, set[str]] = {}
    for request in stub.requests:
        task = request_task(request.json)
        by_api.setdefault(request.api, set()).add(str(task.get("persona", task.get("phase"))))
        assert (
            request.headers.get("x-api-key") == TEST_KEY
            or request.headers.get("authorization") == f"Bearer {TEST_KEY}"
        )
    assert by_api["anthropic"] == {"claude-voice", "synthesis"}
    assert by_api["openai"] == {"gpt-voice"}
    anthropic_models = {r.json["model"] for r in stub.requests if r.api == "anthropic"}
    assert anthropic_models == {sonnet}

    report = council.text(debate_id, "local-voice/report.md")
    assert "### Executive Summary" in report


def test_base_url_option_points_openai_personas_at_any_compatible_server(
    council: Council, stub: StubServer, tmp_path: Path
) -> None:
    models = {"first-voice": "openai:llama3.1", "second-voice": "openai:qwen2.5"}

    result = council(
        "run",
        "--topic",
        TOPIC,
        "--options",
        OPTIONS,
        "--personas",
        roster_file(tmp_path / "roster.json", models),
        "--rounds",
        "1",
        "--synth-model",
        "openai:llama3.1",
        "--base-url",
        stub.openai_url,
    )

    assert result.code == 0, result.err
    assert {r.json["model"] for r in stub.requests} == {"llama3.1", "qwen2.5"}
    assert all(r.api == "openai" for r in stub.requests)
    # A local server needs no key: the SDK gets a placeholder, never a real one.
    assert {r.headers.get("authorization") for r in stub.requests} == {"Bearer not-needed"}
    assert all(r["provider"] == "openai" for r in council.usage(result.last_line))


def test_aliases_name_anthropic_models() -> None:
    for alias in ("opus", "sonnet", "haiku"):
        spec = parse_model(alias)
        assert spec.provider == "anthropic"
        assert spec.model.startswith(f"claude-{alias}-")


def test_an_unknown_model_is_refused_before_anything_is_called(
    council: Council, tmp_path: Path
) -> None:
    result = council(
        "run",
        "--topic",
        TOPIC,
        "--personas",
        roster_file(tmp_path / "roster.json", {"a-voice": "scripted", "b-voice": "mystery:model"}),
    )

    assert result.code == 2
    assert "Unknown provider 'mystery'" in result.err
    assert council.ids() == [] or council.usage(council.only_id()) == []
