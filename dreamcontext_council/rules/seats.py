"""A seat a person answers: a persona whose model is `human`.

`run --human SLUG` and a roster entry with `model: human` record it in the persona's
`context-and-persona.md` as `model: human`, the one mark every reader goes by: the run
never calls a model for that seat, the views show a person (not a model family), and
model diversity leaves it out.
"""

from __future__ import annotations

HUMAN_MODEL = "human"


def is_person(model: object) -> bool:
    """Whether a persona's recorded `model` says a person answers it."""
    return isinstance(model, str) and model.strip().lower() == HUMAN_MODEL
