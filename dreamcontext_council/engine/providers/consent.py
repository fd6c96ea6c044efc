"""Consent for what a debate folder asks: its `command:` models run, and its server URL
receives the user's key, only if the user said so.

A debate folder may come from someone else's repository, so a `command:` model found in
it (a persona's `model:`, or any model its `run:` settings record: `MODEL_FIELDS`) is a
program a stranger chose. It runs only when the user named that exact command line on
the command line this time (`--model`, `--check-model`, `--synth-model`,
`--baseline-model`, `--allow-command`), or allowed it before for this folder. The same
holds for the server URL a folder recorded (`run.base_url`): calls, and the key they
carry, go there only when the user named that URL this time (`--base-url`,
`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`) or allowed it before for this folder.

Allowances live in a trust file outside every repository, under the user's config
directory, keyed by the debate folder's absolute resolved path, so a copy of the folder
elsewhere is not trusted: `{"trusted": {folder: [command, …]}, "base_urls": {folder:
[url, …]}}` (a file without `base_urls` allows no URL). Each write drops the folders
that are gone (a key that is no longer a directory, or is a link), so the file does not
grow with every debate ever run, and a folder made later at a gone one's path starts
with no allowance (unless it is made before the file is next written). Every entry point
that runs a debate (the CLI's `run`, the MCP server) goes through
`engine/preflight.check`, which calls `require_consent` and `require_base_url` before any
call and before any write; they read the trust file at most once between them
(`FolderTrust`).
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.models import parse_model
from dreamcontext_council.engine.providers.registry import BASE_URL_ENVS
from dreamcontext_council.errors import ConsentRequired, CouncilError, FormatError
from dreamcontext_council.folder.storage import atomic_write_json, locked
from dreamcontext_council.rules.run_settings import MODEL_FIELDS

TRUST_FILE_ENV = "DREAMCONTEXT_TRUST_FILE"
TRUST_FILE_NAME = "trusted-commands.json"
COMMAND_PREFIX = "command:"
COMMANDS = "trusted"  # the trust file's sections: allowed command lines, allowed server URLs
BASE_URLS = "base_urls"


def trust_file(env: Mapping[str, str]) -> Path:
    """Where allowances are kept: `$DREAMCONTEXT_TRUST_FILE`, else the user's config dir."""
    if env.get(TRUST_FILE_ENV):
        return Path(env[TRUST_FILE_ENV]).expanduser().resolve()
    return config_dir(env) / TRUST_FILE_NAME


def config_dir(env: Mapping[str, str]) -> Path:
    """The user's own config folder, outside every repository: `$XDG_CONFIG_HOME/dreamcontext`
    (when absolute), else `~/.config/dreamcontext`."""
    config = env.get("XDG_CONFIG_HOME") or ""
    base = Path(config) if Path(config).is_absolute() else _home(env) / ".config"
    return (base / "dreamcontext").resolve()


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
    every model its `run:` settings record (each of `MODEL_FIELDS`, as `run.<name>`)."""
    found = []
    debate = files.debate()
    for slug in debate.personas:
        line = command_line(files.context(slug).model or "")
        if line:
            found.append(FolderCommand(slug, line))
    settings = debate.run_settings
    for name in MODEL_FIELDS:
        line = command_line(getattr(settings, name) or "")
        if line:
            found.append(FolderCommand(f"run.{name}", line))
    return found


def folder_key(files: DebateFiles) -> str:
    """The trust file's key for a debate folder: its absolute path, symlinks resolved."""
    return str(files.paths.folder.resolve())


class FolderTrust:
    """What the trust file allows one debate folder, read when first asked and then kept.

    One pre-flight's view: its checks (programs, server URL, tools file) share it, so the
    file is read and parsed once, if at all; the next run makes its own, so an allowance
    written since by any process is seen. Never kept longer than one pre-flight."""

    def __init__(self, files: DebateFiles, env: Mapping[str, str]) -> None:
        self._files = files
        self._env = env

    @cached_property
    def _allowed(self) -> dict[str, frozenset[str]]:
        key = folder_key(self._files)
        sections = _load(trust_file(self._env))
        return {name: frozenset(entries.get(key, [])) for name, entries in sections.items()}

    @property
    def commands(self) -> frozenset[str]:
        """The command lines the user allowed before for this folder."""
        return self._allowed[COMMANDS]

    @property
    def base_urls(self) -> frozenset[str]:
        """The server URLs the user allowed before for this folder."""
        return self._allowed[BASE_URLS]


def require_consent(
    files: DebateFiles,
    named: set[str],
    env: Mapping[str, str],
    trust: FolderTrust | None = None,
) -> list[FolderCommand]:
    """Raise `ConsentRequired` unless every program the folder names was allowed.

    `trust` is the folder's allowances when the caller holds them already. Returns the
    folder's commands. Nothing is written either way.
    """
    found = folder_commands(files)
    if not found:
        return found
    allowed = named | (trust or FolderTrust(files, env)).commands
    refused = [c for c in found if c.command not in allowed]
    if refused:
        raise ConsentRequired(_refusal(files.id, refused))
    return found


def require_base_url(
    files: DebateFiles,
    recorded: str | None,
    env: Mapping[str, str],
    trust: FolderTrust | None = None,
    *,
    setting: str = "base_url",
    flag: str = "--base-url",
) -> None:
    """Raise `ConsentRequired` unless the server URL the folder recorded, which the run
    would send its calls and the user's key to, is one the user named or allowed.

    Named this time: the URL is one of `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` (a URL
    given with `flag`, `--base-url` or `--anthropic-base-url`, replaces the recorded
    `run.<setting>`, so it never comes here). Allowed
    before: the trust file lists it for this folder (`trust`, when the caller holds it).
    Nothing is written either way.
    """
    if not recorded:
        return
    named = {url for name in BASE_URL_ENVS.values() if (url := env.get(name))}
    named |= {url_without_credentials(url)[0] for url in named}
    if recorded in named or recorded in (trust or FolderTrust(files, env)).base_urls:
        return
    shown = visible(url_without_credentials(recorded)[0])
    raise ConsentRequired(
        f"{files.id} recorded the server URL `{shown}` (run.{setting}), which you have not "
        "allowed for this folder: its calls, with your API key, would go there; if you "
        f"trust it, run `dreamcontext council run {files.id} {flag} {shlex.quote(shown)}` "
        "to allow it for this debate."
    )


@dataclass(frozen=True)
class FileDefault:
    """A `command:` model or a server URL that a file the user did not name on this command
    line chose for the run: the project's `_dream_context/council.toml` (engine/setup/defaults.py).

    `setting` is its key (`model`, `synth_model`, `base_url`), `source` the file."""

    setting: str
    value: str
    source: str


def require_named_defaults(
    asked: Iterable[FileDefault], named: Iterable[str], *, calls_openai: bool
) -> None:
    """Raise `ConsentRequired` unless every program and server URL a project file chose was
    named by the user this time: a committed file is someone else's input, like a folder.

    A command runs when its command line was named (`--allow-command`, a model flag); a URL
    that would receive the key (the run calls an `openai:` model) is used only through
    `--base-url`, which then comes first anyway. Nothing is written either way."""
    allowed = set(named)
    for item in asked:
        if item.setting == "base_url":
            if not calls_openai:
                continue
            shown = visible(item.value)
            raise ConsentRequired(
                f"{item.source} sets base_url = `{shown}`, which you have not named: its "
                "calls, with your API key, would go there; the project's file is someone "
                f"else's input, so if you trust it, pass `--base-url {shlex.quote(shown)}`."
            )
        line = command_line(item.value)
        if line is None or line in allowed:
            continue
        shown = visible(line)
        raise ConsentRequired(
            f"{item.source} sets {item.setting} = `{COMMAND_PREFIX}{shown}`, a program you "
            "have not named: the project's file is someone else's input, so if you trust it, "
            f"pass `--allow-command {shlex.quote(shown)}` (or name the model in your own "
            "config file)."
        )


def allow_commands(files: DebateFiles, commands: Iterable[str], env: Mapping[str, str]) -> None:
    """Record in the trust file that these command lines may run for this debate folder."""
    _allow(files, COMMANDS, {c for c in commands if c}, env)


def allow_base_url(files: DebateFiles, url: str | None, env: Mapping[str, str]) -> None:
    """Record that the user named `url` (`--base-url`) for this folder: a resume that finds
    it recorded sends its calls there without asking. Its credentials are never stored."""
    if url:
        _allow(files, BASE_URLS, {url_without_credentials(url)[0]}, env)


def allow_named_models(files: DebateFiles, models: Iterable[str], env: Mapping[str, str]) -> None:
    """The user typed these models for this debate (`agent create --model`, a roster they
    named): record the `command:` ones among them as allowed."""
    allow_commands(files, named_commands(models), env)


def _allow(files: DebateFiles, section: str, wanted: set[str], env: Mapping[str, str]) -> None:
    """Add `wanted` to the trust file's `section` for this folder, keeping all else."""
    if not wanted:
        return
    path = trust_file(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path.parent, within=None):  # the user's config folder: trusted
        data = _load(path)
        key = folder_key(files)
        known = set(data[section].get(key, []))
        if wanted <= known:
            return
        data[section][key] = sorted(known | wanted)
        atomic_write_json(path, _layout(data), within=None)


def _layout(data: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
    """The trust file to write: each section's folders that are still there, sorted;
    `trusted` always (what older versions read), `base_urls` once it is used."""
    gone = {folder for entries in data.values() for folder in entries if not _still_there(folder)}
    kept = {
        name: {folder: entries[folder] for folder in sorted(entries) if folder not in gone}
        for name, entries in data.items()
    }
    return {name: entries for name, entries in kept.items() if entries or name == COMMANDS}


def _still_there(folder: str) -> bool:
    """Whether a trust file key still names a folder: an absolute path to a directory that is
    not a link (keys are resolved paths, so a link there now leads to another folder)."""
    if not os.path.isabs(folder):
        return False
    try:
        return stat.S_ISDIR(os.lstat(folder).st_mode)  # one call: lstat does not follow a link
    except (OSError, ValueError):
        return False


def _load(path: Path) -> dict[str, dict[str, list[str]]]:
    """The trust file's sections, each folder → allowed entries (empty when there is none).

    A file written before server URLs were allowed has no `base_urls`: it allows none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {COMMANDS: {}, BASE_URLS: {}}
    except (OSError, UnicodeDecodeError) as exc:
        raise FormatError(f"Cannot read the trust file {path} ({exc}); fix or delete it.") from exc
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get(COMMANDS), dict):
        sections = {COMMANDS: data[COMMANDS], BASE_URLS: data.get(BASE_URLS, {})}
        if all(_folder_lists(entries) for entries in sections.values()):
            return {
                name: {str(k): list(v) for k, v in entries.items()}
                for name, entries in sections.items()
            }
    raise FormatError(
        f'The trust file {path} is not {{"trusted": {{folder: [command, …]}}, '
        '"base_urls": {folder: [url, …]}}; fix or delete it.'
    )


def _folder_lists(entries: object) -> bool:
    """Whether `entries` maps folders to lists of texts."""
    return isinstance(entries, dict) and all(
        isinstance(v, list) and all(isinstance(c, str) for c in v) for v in entries.values()
    )


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
