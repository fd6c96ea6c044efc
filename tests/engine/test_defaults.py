"""Defaults a user sets once: the command's flags, then the debate's record, then
`DREAMCONTEXT_*`, then the project's `council.toml`, then the user's, then the built-in
default; each layer beats the next, and the plan says where each model came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stub_server import StubServer

from dreamcontext_council.engine.setup.defaults import read_defaults
from dreamcontext_council.engine.setup.plan import personas_setting, resolve
from dreamcontext_council.engine.setup.request import Launch
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.roster import PRESETS
from dreamcontext_council.rules.run_settings import RunSettings

from .support import Council

PROJECT = "_dream_context/council.toml"
USER = "~/.config/dreamcontext/council.toml"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    (path / ".config" / "dreamcontext").mkdir(parents=True)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Root:
    path = tmp_path / "work" / "_dream_context"
    path.mkdir(parents=True)
    return Root(path)


def layers(home: Path, root: Root, *, env: dict[str, str], project: str, user: str) -> Launch:
    (root.path / "council.toml").write_text(project, encoding="utf-8")
    (home / ".config" / "dreamcontext" / "council.toml").write_text(user, encoding="utf-8")
    return Launch(topic="Should we ship?", personas_spec="auto", env={"HOME": str(home), **env})


def model_of(request: Launch, root: Root, previous: RunSettings | None = None) -> tuple[str, str]:
    defaults = read_defaults(request.env, root)
    plan = resolve(request, None, None, previous or RunSettings(), defaults=defaults)
    return plan.seats.model, plan.seats.sources["model"]


ALL = {
    "env": {"DREAMCONTEXT_MODEL": "openai:from-env"},
    "project": 'model = "openai:from-project"\n',
    "user": 'model = "openai:from-user"\n',
}


def test_each_layer_beats_the_next(home: Path, root: Root) -> None:
    request = layers(home, root, **ALL)  # type: ignore[arg-type]
    recorded = RunSettings(model="openai:from-record")

    request.model = "openai:from-flag"
    assert model_of(request, root, recorded) == ("openai:from-flag", "--model")
    request.model = None
    assert model_of(request, root, recorded) == ("openai:from-record", "debate.md run.model")
    assert model_of(request, root) == ("openai:from-env", "DREAMCONTEXT_MODEL")
    request.env = {"HOME": str(home)}
    assert model_of(request, root) == ("openai:from-project", PROJECT)
    (root.path / "council.toml").unlink()
    assert model_of(request, root) == ("openai:from-user", USER)
    (home / ".config" / "dreamcontext" / "council.toml").unlink()
    assert model_of(request, root) == ("scripted", "the default: no API key is set")


def test_every_model_seat_and_the_server_url_have_defaults(home: Path, root: Root) -> None:
    request = layers(
        home,
        root,
        env={"DREAMCONTEXT_SYNTH_MODEL": "opus"},
        project='check_model = "haiku"\nbase_url = "http://127.0.0.1:9/v1"\n',
        user='baseline_model = "openai:gpt-4o"\nsynth_model = "sonnet"\n',
    )
    plan = resolve(request, None, None, RunSettings(), defaults=read_defaults(request.env, root))

    assert plan.seats.described("synth_model") == "opus (from DREAMCONTEXT_SYNTH_MODEL)"
    assert plan.seats.described("check_model") == f"haiku (from {PROJECT})"
    assert plan.seats.described("baseline_model") == f"openai:gpt-4o (from {USER})"
    assert (plan.endpoints.base_url, plan.endpoints.source) == ("http://127.0.0.1:9/v1", PROJECT)
    # The project's URL is someone else's choice: not named, asked for consent.
    assert plan.consent.base_url is None
    asked = [(a.setting, a.source) for a in plan.consent.asked]
    assert asked == [("check_model", PROJECT), ("base_url", PROJECT)]
    assert plan.recorded().check_model == "haiku"  # a resume keeps what the run used


def test_openai_base_url_beats_the_files_and_stays_the_sdks(home: Path, root: Root) -> None:
    request = layers(
        home,
        root,
        env={"OPENAI_BASE_URL": "http://127.0.0.1:7/v1"},
        project='base_url = "http://127.0.0.1:9/v1"\n',
        user="",
    )
    plan = resolve(request, None, None, RunSettings(), defaults=read_defaults(request.env, root))

    assert (plan.endpoints.base_url, plan.endpoints.source) == (None, "OPENAI_BASE_URL")
    assert plan.consent.asked == ()


def test_personas_come_from_the_flag_then_the_defaults(home: Path, root: Root) -> None:
    request = layers(
        home,
        root,
        env={},
        project='personas = "engineering"\n',
        user='personas = "auto"\n',
    )
    defaults = read_defaults(request.env, root)
    assert personas_setting(request, defaults) == ("auto", "--personas")
    request.personas_spec = None
    assert personas_setting(request, defaults) == ("engineering", PROJECT)
    (root.path / "council.toml").unlink()
    assert personas_setting(request, read_defaults(request.env, root)) == ("auto", USER)
    env = {**request.env, "DREAMCONTEXT_PERSONAS": "cognitive"}
    assert personas_setting(request, read_defaults(env, root)) == (
        "cognitive",
        "DREAMCONTEXT_PERSONAS",
    )


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('model = "sonnet"\nmodel = "opus"\n', "is not valid TOML (Cannot overwrite a value"),
        ("model = sonnet\n", "is not valid TOML (Invalid value (at line 1"),
        ('models = "sonnet"\n', "unknown setting `models`; a defaults file sets only model, "),
        ("[model]\nname = 'x'\n", "model must be a non-empty text in quotes"),
        ('timeout = "5"\n', "unknown setting `timeout`"),
        ('personas = "./roster.yaml"\n', "personas must be a preset (cognitive, engineering"),
        ('base_url = "ftp://host/v1"\n', "base_url must be an http:// or https:// URL"),
        ('anthropic_auth_token = "x"\n', "`anthropic_auth_token` looks like a key"),
    ],
)
def test_a_wrong_project_file_is_one_line_naming_the_file(
    home: Path, root: Root, text: str, said: str
) -> None:
    (root.path / "council.toml").write_text(text, encoding="utf-8")

    with pytest.raises(UsageError) as raised:
        read_defaults({"HOME": str(home)}, root)

    message = str(raised.value)
    assert message.startswith(f"{PROJECT}: ")
    assert said in message
    assert "\n" not in message


def test_a_large_or_linked_project_file_is_refused_unread(
    home: Path, root: Root, tmp_path: Path
) -> None:
    path = root.path / "council.toml"
    path.write_text("# padding\n" * 4000, encoding="utf-8")
    with pytest.raises(UsageError, match=r"council.toml: is over 16 KiB"):
        read_defaults({"HOME": str(home)}, root)
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('model = "opus"\n', encoding="utf-8")
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(UsageError, match=r"^_dream_context/council.toml: "):
        read_defaults({"HOME": str(home)}, root)


def test_a_wrong_variable_names_itself(home: Path) -> None:
    with pytest.raises(UsageError, match=r"^DREAMCONTEXT_CHECK_MODEL: check_model is not a model"):
        read_defaults({"HOME": str(home), "DREAMCONTEXT_CHECK_MODEL": "nonsense"}, None)


def test_the_user_file_follows_xdg_config_home(tmp_path: Path, home: Path) -> None:
    config = tmp_path / "xdg"
    (config / "dreamcontext").mkdir(parents=True)
    (config / "dreamcontext" / "council.toml").write_text('model = "haiku"\n', encoding="utf-8")
    defaults = read_defaults({"HOME": str(home), "XDG_CONFIG_HOME": str(config)}, None)
    setting = defaults.get("model")
    assert setting is not None and setting.value == "haiku" and setting.trusted
    assert setting.source == str(config / "dreamcontext" / "council.toml")


def test_dry_run_says_where_each_model_came_from(council: Council, stub: StubServer) -> None:
    council.root.mkdir()
    (council.root / "council.toml").write_text(
        'model = "openai:gpt-4o"\npersonas = "engineering"\n', encoding="utf-8"
    )
    result = council.proc(
        "run", "--topic", "Should we ship the beta?", "--options", "A=Ship,B=Wait",
        "--dry-run", "--yes", "--synth-model", "openai:gpt-4o-mini", "--json",
        env={"OPENAI_API_KEY": "sk-test-not-a-key", "DREAMCONTEXT_CHECK_MODEL": "openai:o3-mini",
             "OPENAI_BASE_URL": stub.openai_url},  # the pre-flight's models list goes there
    )  # fmt: skip

    assert result.code == 0, result.err
    summary = json.loads(result.out)
    lines = summary["message"].splitlines()
    assert "  model: openai:gpt-4o (from _dream_context/council.toml)" in lines
    assert "  synth_model: openai:gpt-4o-mini (from --synth-model)" in lines
    assert "  check_model: openai:o3-mini (from DREAMCONTEXT_CHECK_MODEL)" in lines
    personas = {c["persona"] for c in summary["plan"] if c["phase"] == "persona"}
    assert personas == {p.slug for p in PRESETS["engineering"]}


def test_a_wrong_personas_variable_names_itself(council: Council) -> None:
    result = council.proc(
        "run", "--topic", "Should we ship the beta?", "--dry-run", "--yes",
        env={"DREAMCONTEXT_PERSONAS": "no-such-preset"},
    )  # fmt: skip

    assert result.code == 2
    [line] = result.err.strip().splitlines()
    assert "DREAMCONTEXT_PERSONAS: --personas 'no-such-preset' is neither a preset" in line
