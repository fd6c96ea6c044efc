"""Defaults a user sets once: the environment, the project's file, the user's own file.

Below the command's flags and what a debate recorded of its last run, three layers name
the models, the personas and the server URL a run uses when nothing above them does,
highest first:

1. the environment: `DREAMCONTEXT_MODEL`, `DREAMCONTEXT_CHECK_MODEL`,
   `DREAMCONTEXT_SYNTH_MODEL`, `DREAMCONTEXT_BASELINE_MODEL`, `DREAMCONTEXT_PERSONAS`, and
   `OPENAI_BASE_URL` for the server URL (which the openai SDK reads itself);
2. the project's file, `_dream_context/council.toml`, committed and shared by a team;
3. the user's file, `council.toml` in the user's config directory (the trust file's:
   `$XDG_CONFIG_HOME/dreamcontext/`, else `~/.config/dreamcontext/`).

The environment and the user's file are the user's own, trusted like a flag. The
project's file is someone else's input, like a debate folder: a `command:` model or a
server URL it names runs only when the user named it on the command line
(engine/providers/consent.py `require_named_defaults`). Keys never live in these files:
a key-like setting or a URL with credentials is refused. `resolve` (engine/setup/plan.py)
is the one place the layers meet.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from dreamcontext_council.engine.providers.consent import config_dir
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.models import ACCEPTED_FORMS, parse_model
from dreamcontext_council.engine.providers.registry import BASE_URL_ENVS
from dreamcontext_council.errors import CouncilError, UsageError
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.folder.safe_read import read_bytes
from dreamcontext_council.rules.roster import PRESETS
from dreamcontext_council.rules.run_settings import MODEL_FIELDS

FILE_NAME = "council.toml"
MAX_FILE_BYTES = 16 * 1024
ENV_PREFIX = "DREAMCONTEXT_"
PERSONAS = "personas"
BASE_URL = "base_url"
KEYS = (*MODEL_FIELDS, PERSONAS, BASE_URL)
"""The settings a defaults file may hold; every other key is refused."""

ENV_NAMES = {name: ENV_PREFIX + name.upper() for name in (*MODEL_FIELDS, PERSONAS)}
ENV_NAMES[BASE_URL] = BASE_URL_ENVS["openai"]

PROJECT_SOURCE = f"_dream_context/{FILE_NAME}"
FILE_PERSONAS = (*PRESETS, "auto")  # a roster file is named with --personas, never by a file
_KEY_LIKE = re.compile(r"(?i)(api_?key|(^|_)key$|token|secret|password|passwd)")


@dataclass(frozen=True)
class Setting:
    """One default and where it came from: `source` as shown to the user (`DREAMCONTEXT_MODEL`,
    `_dream_context/council.toml`); `trusted` when it is the user's own (the environment,
    their config file), false for the project's file."""

    value: str
    source: str
    trusted: bool


@dataclass(frozen=True)
class Defaults:
    """The defaults layers, highest first; `get` gives the first that sets a setting."""

    layers: tuple[Mapping[str, Setting], ...] = ()

    def get(self, name: str) -> Setting | None:
        for layer in self.layers:
            if name in layer:
                return layer[name]
        return None


def user_file(env: Mapping[str, str]) -> Path:
    """The user's defaults file: `council.toml` in their config directory."""
    return config_dir(env) / FILE_NAME


def read_defaults(env: Mapping[str, str], root: Root | None) -> Defaults:
    """The environment's, the project's (`root`'s `council.toml`, None: no root yet) and the
    user's defaults. Raises `UsageError` with one line for a file or variable that is wrong."""
    layers = [_environment(env)]
    if root is not None:
        layers.append(_project(root))
    path = user_file(env)
    shown = _shown_user_path(path, env)
    layers.append(_parse(_read_user(path, shown), shown, trusted=True))
    return Defaults(tuple(layers))


def _environment(env: Mapping[str, str]) -> Mapping[str, Setting]:
    found = {}
    for name, variable in ENV_NAMES.items():
        value = (env.get(variable) or "").strip()
        if value:
            if name != BASE_URL:  # the SDK's own variable: checked where it is used
                _check(name, value, variable, file=False)
            found[name] = Setting(value, variable, trusted=True)
    return MappingProxyType(found)


def _project(root: Root) -> Mapping[str, Setting]:
    path = root.path / FILE_NAME
    try:
        data = read_bytes(path, within=root.path, limit=MAX_FILE_BYTES)
    except FileNotFoundError:
        return MappingProxyType({})
    except CouncilError as exc:  # a link out of the root, a FIFO, over the limit
        raise UsageError(f"{PROJECT_SOURCE}: {_over(exc)}") from None
    except OSError as exc:
        raise UsageError(f"{PROJECT_SOURCE}: cannot be read ({exc.strerror}).") from None
    return _parse(data, PROJECT_SOURCE, trusted=False)


def _over(exc: CouncilError) -> str:
    text = str(exc)
    if "-byte limit" in text:
        return f"is over {MAX_FILE_BYTES // 1024} KiB; a defaults file holds a few lines."
    return text


def _read_user(path: Path, shown: str) -> bytes:
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise UsageError(f"{shown}: cannot be read ({exc.strerror}).") from None
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(
            f"{shown}: is over {MAX_FILE_BYTES // 1024} KiB; a defaults file holds a few lines."
        )
    return data


def _shown_user_path(path: Path, env: Mapping[str, str]) -> str:
    home = env.get("HOME")
    if home and path.is_relative_to(home):
        return "~/" + str(path.relative_to(home))
    return str(path)


def _parse(data: bytes, source: str, *, trusted: bool) -> Mapping[str, Setting]:
    """The settings of one defaults file: flat `key = "text"` lines of `KEYS`, nothing else."""
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{source}: is not UTF-8 text; save it as UTF-8.") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{source}: is not valid TOML ({exc}); fix that line.") from None
    found = {}
    for key, value in table.items():
        if _KEY_LIKE.search(key):
            raise UsageError(
                f"{source}: `{key}` looks like a key, and keys never live in {FILE_NAME}; "
                "remove the line and set the key in the environment (ANTHROPIC_API_KEY, "
                "OPENAI_API_KEY)."
            )
        if key not in KEYS:
            raise UsageError(
                f"{source}: unknown setting `{key}`; a defaults file sets only {', '.join(KEYS)}."
            )
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f'{source}: {key} must be a non-empty text in quotes: {key} = "…".')
        _check(key, value.strip(), source, file=True)
        found[key] = Setting(value.strip(), source, trusted)
    return MappingProxyType(found)


def _check(key: str, value: str, source: str, *, file: bool) -> None:
    """Refuse a value that is not a model, a preset or a URL; the value is never echoed,
    as it may be a key written in the wrong place."""
    if key in MODEL_FIELDS:
        try:
            parse_model(value)
        except CouncilError:
            raise UsageError(f"{source}: {key} is not a model; use {ACCEPTED_FORMS}.") from None
    elif key == PERSONAS:
        if file and value not in FILE_PERSONAS:
            raise UsageError(
                f"{source}: personas must be a preset ({', '.join(FILE_PERSONAS)}); a roster "
                "file is named with --personas FILE."
            )
    elif key == BASE_URL:
        if url_without_credentials(value)[1]:
            raise UsageError(
                f"{source}: base_url carries credentials, and keys never live in {FILE_NAME}; "
                "remove them from the URL and set the key in the environment (OPENAI_API_KEY)."
            )
        if not re.match(r"(?i)https?://[^/\s]+", value):
            raise UsageError(f"{source}: base_url must be an http:// or https:// URL.")
