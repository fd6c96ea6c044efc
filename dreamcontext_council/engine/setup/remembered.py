"""A debate remembers how it is run: `run <id>` goes on with the models and settings it started with.

`run` records the settings of its plan in debate.md (`run:`, see rules/run_settings.py)
and the model of every persona in its context-and-persona.md, before its first call. A
resume's plan (engine/setup/plan.py) fills every option not given from that record, so
it never falls back to the default model (keys set → a provider, else scripted) in
place of a recorded one. An option given to a resume wins and is recorded in turn. `--model` on a resume moves the
personas that ran on the run's model; a persona that named its own model keeps it.
"""

from __future__ import annotations

from dataclasses import replace

from filelock import FileLock, Timeout

from dreamcontext_council.actions import convene
from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.protocol.plan import RunPlan
from dreamcontext_council.errors import StateError
from dreamcontext_council.folder.safe_write import file_ready
from dreamcontext_council.rules.debate import RUN_KEY
from dreamcontext_council.rules.roster import person_spec
from dreamcontext_council.rules.run_settings import RunSettings
from dreamcontext_council.rules.seats import HUMAN_MODEL


def recorded(files: DebateFiles | None) -> RunSettings:
    """What the debate recorded of its last run; empty for a new debate or one never run."""
    return files.debate().run_settings if files is not None else RunSettings()


def persona_model(own: str, previous: RunSettings, run_model: str) -> tuple[str, bool]:
    """The model a persona runs on, and whether it is the run's model (`--model` moves it).

    A persona that names no model, or the model the last run used for such personas,
    runs on the run's model; one that named another keeps its own.
    """
    if not own or (previous.model is not None and own == previous.model):
        return run_model, True
    return own, False


def record(files: DebateFiles, plan: RunPlan, run_lock: str) -> None:
    """Write the run's settings to debate.md and each persona's model to its context file.

    With `run --only`, just those personas' models: debate.md and the other
    personas' files are another machine's to write, so the branches merge cleanly.

    Refused while another `run` drives the debate (it holds `run_lock`), so a live run's
    record is never changed under it. It allows nothing: `launch` records in the trust
    file only what the user named this time (engine/providers/consent.py), never what was recorded.
    """
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
        _seat_persons(files, plan)
        with files.lock():
            debate = files.debate()
            settings = plan.recorded().as_meta()
            only = plan.flags.only
            if only is None and debate.meta.get(RUN_KEY) != settings:
                debate.meta[RUN_KEY] = settings
                files.save_debate(debate)
            persons = {seat.slug for seat in plan.seats.person_seats()}
            for slug in debate.personas if only is None else only:
                context = files.context(slug)
                model, _ = persona_model(context.model, plan.previous, plan.seats.model)
                if slug in persons:
                    model = HUMAN_MODEL  # `run --human`: from now on a person's seat
                if model != context.model:
                    files.save_context(slug, replace(context, model=model))
    finally:
        lock.release()


def _seat_persons(files: DebateFiles, plan: RunPlan) -> None:
    """Add the person's seats the plan names that the council lacks (`run --human SLUG`),
    as `agent create` adds a persona: after `--personas auto` wrote the others."""
    seated = set(files.debate().personas)
    for seat in plan.seats.person_seats():
        if seat.slug not in seated:
            convene.create_agent(files.root, files.id, person_spec(seat.slug))
