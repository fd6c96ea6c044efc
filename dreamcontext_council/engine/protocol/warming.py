"""Round 1's warming: on each model, one persona starts alone and the rest once its answer
begins, so they read the debate brief from the provider's prompt cache.

Round 1's calls start together, and a prompt cache serves a prefix only once the call that
wrote it has begun answering: without warming every persona of round 1 pays for the brief
(question, facts, options, attachments) whole. Where the brief is large, the first call
on a model writes it and the others, started when its first words arrive, read it (at a
tenth of the input price on Anthropic, at OpenAI's cached price). The wait is the first
call's time to its first words, once a run; `run --no-warm` turns it off.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.engine.prompting import prompts
from dreamcontext_council.engine.providers.models import ModelSpec
from dreamcontext_council.errors import CouncilError
from dreamcontext_council.rules.persona import PersonaContext
from dreamcontext_council.rules.seats import is_person

# The providers whose servers cache prompt prefixes.
CACHING_PROVIDERS = ("anthropic", "openai")
# A brief shorter than this (in characters, about 4 a token) is not worth a wait: a cache
# keeps no prefix under 1,024 tokens, and a small one saves little.
WARM_MIN_CHARS = 8_192


@dataclass
class Warming:
    """Who leads on each model and who waits for its answer to begin."""

    leads: dict[str, asyncio.Event] = field(default_factory=dict)
    """A leading persona → the event it sets once its answer begins (or its call ends)."""
    waits: dict[str, asyncio.Event] = field(default_factory=dict)
    """A waiting persona → its lead's event."""

    def began(self, slug: str) -> Callable[[str], None] | None:
        """The text listener that tells `slug`'s followers its answer has begun, if it leads."""
        event = self.leads.get(slug)
        return None if event is None else (lambda _piece: event.set())

    def done(self, slug: str) -> None:
        """`slug`'s call is over, however it ended: its followers wait no longer."""
        event = self.leads.get(slug)
        if event is not None:
            event.set()

    async def wait(self, slug: str) -> None:
        """Wait until `slug`'s lead has begun answering (at once when it does not wait)."""
        event = self.waits.get(slug)
        if event is not None:
            await event.wait()


def plan_warming(
    number: int, models: Mapping[str, ModelSpec], brief_chars: int, *, enabled: bool
) -> Warming:
    """Round `number`'s warming for the personas `models` maps to their model, in order:
    in round 1 with a brief of at least `WARM_MIN_CHARS`, the first persona on each
    caching model leads and the others on that model wait for it."""
    warming = Warming()
    if not enabled or number != 1 or brief_chars < WARM_MIN_CHARS:
        return warming
    first: dict[str, str] = {}
    for slug, spec in models.items():
        if spec.provider not in CACHING_PROVIDERS:
            continue
        lead = first.setdefault(str(spec), slug)
        if lead != slug:
            event = warming.leads.setdefault(lead, asyncio.Event())
            warming.waits[slug] = event
    return warming


def round_warming(
    number: int,
    materials: Mapping[str, prompts.RoundMaterial | CouncilError],
    files: DebateFiles,
    model_for: Callable[[PersonaContext], ModelSpec],
    *,
    enabled: bool,
) -> Warming:
    """`plan_warming` over the personas of the round a model answers (a person's seat, or
    one whose material or file cannot be read, is left out: it never calls)."""
    models: dict[str, ModelSpec] = {}
    brief = 0
    for slug, material in materials.items():
        if isinstance(material, CouncilError):
            continue
        try:
            context = files.context(slug)
        except CouncilError:
            continue  # it fails alone when asked
        if not is_person(context.model):
            models[slug] = model_for(context)
            brief = brief or len(prompts.debate_brief(material))
    return plan_warming(number, models, brief, enabled=enabled)
