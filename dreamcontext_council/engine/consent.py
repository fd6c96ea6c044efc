"""Consent for `command:` models: a program named in a debate folder runs only if the user said so.

A debate folder may come from someone else's repository, so a `command:` model found in
it (a persona's `model:`) is a program a stranger chose. It runs only when the user
named that exact command line on the command line this time (`--model`,
`--check-model`, `--synth-model`, `--allow-command`), or allowed it before for this
folder. Allowances live in a trust file outside every repository, under the user's
config directory, keyed by the debate folder's absolute resolved path and the command
line, so a copy of the folder elsewhere is not trusted. Every entry point that runs a
debate (the CLI's `run`, a future MCP server) calls `require_consent` before any call.
"""

from __future__ import annotations

import json
import shlex
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.errors import ConsentRequired, CouncilError, FormatError
from dreamcontext_council.folder.storage import atomic_write_json, locked

TRUST_FILE_ENV = "DREAMCONTEXT_TRUST_FILE"
TRUST_FILE_NAME = "trusted-commands.json"
COMMAND_PREFIX = "command:"


def trust_file(env: Mapping[str, str]) -> Path:
    """Where allowances are kept: `$DREAMCONTEXT_TRUST_FILE`, else the user's config dir."""
    if env.get(TRUST_FILE_ENV):
        return Path(env[TRUST_FILE_ENV]).expanduser().resolve()
    config = env.get("XDG_CONFIG_HOME") or ""
    base = Path(config) if Path(config).is_absolute() else _home(env) / ".config"
    return (base / "dreamcontext" / TRUST_FILE_NAME).resolve()


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def command_line(model: str) -> str | None:
    """The command line a model string runs, or None when it names no program."""
    try:
        spec = parse_model(model)
    except CouncilError:
        return None  # refused later, with the accepted forms, before any call
    return spec.model if spec.provider == "command" else None


def allowed_form(text: str) -> str:
    """What `--allow-command` names: a command line, with or without `command:` before it."""
    stripped = text.strip()
    if stripped.lower().startswith(COMMAND_PREFIX):
        stripped = stripped[len(COMMAND_PREFIX) :].strip()
    return stripped


def named_commands(models: Iterable[str | None], allowed: Iterable[str] = ()) -> set[str]:
    """The command lines the user named this time: `command:` models and `--allow-command`s."""
    named = {line for m in models if m and (line := command_line(m))}
    return named | {form for a in allowed if (form := allowed_form(a))}


@dataclass(frozen=True)
class FolderCommand:
    """A program a debate folder asks to run: who asks for it and its command line."""

    persona: str
    command: str


def folder_commands(files: DebateFiles) -> list[FolderCommand]:
    """Every `command:` model the debate folder itself names: its personas' `model:` and
    the models its `run:` settings record (`run.model`, `run.check_model`, `run.synth_model`)."""
    found = []
    debate = files.debate()
    for slug in debate.personas:
        line = command_line(files.context(slug).model or "")
        if line:
            found.append(FolderCommand(slug, line))
    settings = debate.run_settings
    for name in ("model", "check_model", "synth_model"):
        line = command_line(getattr(settings, name) or "")
        if line:
            found.append(FolderCommand(f"run.{name}", line))
    return found


def folder_key(files: DebateFiles) -> str:
    """The trust file's key for a debate folder: its absolute path, symlinks resolved."""
    return str(files.paths.folder.resolve())


def trusted_commands(files: DebateFiles, env: Mapping[str, str]) -> set[str]:
    """The command lines the user allowed before for this very folder."""
    return set(_load(trust_file(env)).get(folder_key(files), []))


def require_consent(
    files: DebateFiles, named: set[str], env: Mapping[str, str]
) -> list[FolderCommand]:
    """Raise `ConsentRequired` unless every program the folder names was allowed.

    Returns the folder's commands. Nothing is written either way.
    """
    found = folder_commands(files)
    if not found:
        return found
    allowed = named | trusted_commands(files, env)
    refused = [c for c in found if c.command not in allowed]
    if refused:
        raise ConsentRequired(_refusal(files.id, refused))
    return found


def allow_commands(files: DebateFiles, commands: Iterable[str], env: Mapping[str, str]) -> None:
    """Record in the trust file that these command lines may run for this debate folder."""
    wanted = {c for c in commands if c}
    if not wanted:
        return
    path = trust_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.parent, within=None):  # the user's config folder: trusted
        data = _load(path)
        key = folder_key(files)
        known = set(data.get(key, []))
        if wanted <= known:
            return
        data[key] = sorted(known | wanted)
        atomic_write_json(path, {"trusted": dict(sorted(data.items()))}, within=None)


def allow_named_models(files: DebateFiles, models: Iterable[str], env: Mapping[str, str]) -> None:
    """The user typed these models for this debate (`agent create --model`, a roster they
    named): record the `command:` ones among them as allowed."""
    allow_commands(files, named_commands(models), env)


def _load(path: Path) -> dict[str, list[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"Cannot read the trust file {path} ({exc}); fix or delete it.") from exc
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    trusted = data.get("trusted") if isinstance(data, dict) else None
    if not isinstance(trusted, dict) or not all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in trusted.values()
    ):
        raise FormatError(
            f'The trust file {path} is not {{"trusted": {{folder: [command, …]}}}}; '
            "fix or delete it."
        )
    return {str(k): list(v) for k, v in trusted.items()}


def visible(text: str) -> str:
    """`text` with control and format characters shown as escapes, so one line stays one line."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")
        else ch
        for ch in text
    )


def _refusal(debate_id: str, refused: list[FolderCommand]) -> str:
    commands = list(dict.fromkeys(c.command for c in refused))
    personas = ", ".join(dict.fromkeys(c.persona for c in refused))
    shown = ", ".join(f"`{visible(c)}`" for c in commands)
    flags = " ".join(f"--allow-command {shlex.quote(visible(c))}" for c in commands)
    what = "a program" if len(commands) == 1 else "programs"
    return (
        f"{debate_id} asks to run {what} you have not allowed for this folder "
        f"(persona {personas}): {shown}; if you trust it, run "
        f"`dreamcontext council run {debate_id} {flags}` to allow it for this debate."
    )
