"""A debate remembers how it is run: `run <id>` goes on with the models and settings it started with.

`run` records the settings it uses in debate.md (`run:`, see rules/run_settings.py) and
the model of every persona in its context-and-persona.md, before its first call. A
resume fills every option not given from that record, so it never falls back to the
default model (keys set → a provider, else scripted) in place of a recorded one. An
option given to a resume wins and is recorded in turn. `--model` on a resume moves the
personas that ran on the run's model; a persona that named its own model keeps it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from filelock import FileLock, Timeout

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.protocol.answer_cap import DEFAULT_MAX_ANSWER_KB
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.models import default_model
from dreamcontext_council.errors import StateError, UsageError
from dreamcontext_council.folder.safe_write import file_ready
from dreamcontext_council.rules.run_settings import (
    DEFAULT_MAX_TOOL_CALLS,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    DEFAULT_WINDOW,
    MODEL_FIELDS,
    RUN_KEY,
    RunSettings,
)

if TYPE_CHECKING:
    from dreamcontext_council.engine.setup.request import Launch

T = TypeVar("T")
D = TypeVar("D")


def recorded(files: DebateFiles | None) -> RunSettings:
    """What the debate recorded of its last run; empty for a new debate or one never run."""
    return files.debate().run_settings if files is not None else RunSettings()


def settle(request: Launch, previous: RunSettings) -> Launch:
    """`request` with every option not given taken from `previous`, else from the defaults.

    The result names the run's model always: the recorded one wins over the default.
    """
    if previous.base_url_secret and request.base_url is None:
        raise UsageError(
            "This debate ran on a --base-url that carried credentials, which are never "
            "stored; pass --base-url again."
        )

    models = {name: getattr(request, name) or getattr(previous, name) for name in MODEL_FIELDS}
    models["model"] = models["model"] or default_model(request.env)
    return replace(
        request,
        **models,
        base_url=request.base_url or previous.base_url,
        timeout=_first(request.timeout, previous.timeout, DEFAULT_TIMEOUT),
        retries=_first(request.retries, previous.retries, DEFAULT_RETRIES),
        concurrency=_first(request.concurrency, previous.concurrency, None),
        max_cost=_first(request.max_cost, previous.max_cost, None),
        max_calls=_first(request.max_calls, previous.max_calls, None),
        gate=_first(request.gate, previous.gate, None),
        window=_first(request.window, previous.window, DEFAULT_WINDOW),
        max_answer_kb=_first(request.max_answer_kb, previous.max_answer_kb, DEFAULT_MAX_ANSWER_KB),
        # A flag cannot be unsaid on a resume: once a run was compact, it stays so.
        compact=request.compact or previous.compact,
        early_stop=request.early_stop or previous.early_stop,
        baseline=request.baseline or previous.baseline,
        tools=request.tools or previous.tools,
        max_tool_calls=_first(
            request.max_tool_calls, previous.max_tool_calls, DEFAULT_MAX_TOOL_CALLS
        ),
    )


def _first(given: T | None, stored: T | None, default: D) -> T | D:
    """The option given this time, else the recorded one, else the default."""
    if given is not None:
        return given
    return stored if stored is not None else default


def persona_model(own: str, previous: RunSettings, run_model: str) -> tuple[str, bool]:
    """The model a persona runs on, and whether it is the run's model (`--model` moves it).

    A persona that names no model, or the model the last run used for such personas,
    runs on the run's model; one that named another keeps its own.
    """
    if not own or (previous.model is not None and own == previous.model):
        return run_model, True
    return own, False


def settings_of(request: Launch) -> RunSettings:
    """The settings to record for a settled request: no key, no credentials in the URL."""
    base_url, secret = (
        url_without_credentials(request.base_url) if request.base_url else (None, False)
    )
    return RunSettings(
        **{name: getattr(request, name) for name in MODEL_FIELDS},
        base_url=base_url,
        base_url_secret=secret,
        timeout=request.timeout,
        retries=request.retries,
        concurrency=request.concurrency,
        max_cost=request.max_cost,
        max_calls=request.max_calls,
        gate=request.gate,
        window=request.window,
        max_answer_kb=request.max_answer_kb,
        compact=request.compact,
        early_stop=request.early_stop,
        baseline=request.baseline,
        tools=request.tools,
        max_tool_calls=request.max_tool_calls,
    )


def record(
    files: DebateFiles,
    request: Launch,
    previous: RunSettings,
    run_lock: str,
    only: list[str] | None = None,
) -> None:
    """Write the run's settings to debate.md and each persona's model to its context file.

    With `only` (`run --only`), just those personas' models: debate.md and the other
    personas' files are another machine's to write, so the branches merge cleanly.

    Refused while another `run` drives the debate (it holds `run_lock`), so a live run's
    record is never changed under it. It allows nothing: `launch` records in the trust
    file only what the user named this time (engine/providers/consent.py), never what was recorded.
    """
    assert request.model is not None, "settle() names the run's model"
    file_ready(files.paths.folder / run_lock, files.root.path)  # a link is not opened
    lock = FileLock(str(files.paths.folder / run_lock), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise StateError(
            f"Another `dreamcontext council run` is driving {files.id}; wait for it to "
            "finish, or stop it and run this again."
        ) from None
    try:
        with files.lock():
            debate = files.debate()
            settings = settings_of(request).as_meta()
            if only is None and debate.meta.get(RUN_KEY) != settings:
                debate.meta[RUN_KEY] = settings
                files.save_debate(debate)
            for slug in debate.personas if only is None else only:
                context = files.context(slug)
                model, _ = persona_model(context.model, previous, request.model)
                if model != context.model:
                    files.save_context(slug, replace(context, model=model))
    finally:
        lock.release()
