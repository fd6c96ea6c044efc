"""Personas: built-in presets and roster files (YAML or JSON lists of personas)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from dreamcontext_council import resources
from dreamcontext_council.errors import UsageError
from dreamcontext_council.folder import strict_yaml
from dreamcontext_council.folder.names import check_slug
from dreamcontext_council.rules.limits import (
    MAX_PERSONAS,
    MAX_ROSTER_FILE_BYTES,
    MIN_PERSONAS,
    check_length,
)
from dreamcontext_council.rules.seats import HUMAN_MODEL


@dataclass(frozen=True)
class PersonaSpec:
    """What it takes to seat a persona."""

    slug: str
    body: str
    model: str = ""
    aspects: list[str] = field(default_factory=list)


def _spec(slug: str, aspects: str, body: str) -> PersonaSpec:
    return PersonaSpec(slug, body, "", [a.strip() for a in aspects.split(",")])


PRESETS: dict[str, list[PersonaSpec]] = {
    "cognitive": [
        _spec(
            "synthesizer",
            "patterns, analogies, integration",
            "You are the Synthesizer. You look for patterns across the arguments and for "
            "analogies with decisions made elsewhere. You connect what others say into a "
            "coherent picture and name the option that best fits the whole of the evidence.",
        ),
        _spec(
            "epistemologist",
            "evidence, assumptions, uncertainty",
            "You are the Epistemologist. You separate what is known from what is assumed. "
            "For every claim you ask how we know it, what would change our mind, and how "
            "confident we are entitled to be. You lower conviction when evidence is thin.",
        ),
        _spec(
            "contrarian",
            "counterexamples, failure modes, consensus",
            "You are the Contrarian. You challenge the consensus and look for the "
            "counterexample that breaks it. You argue the unpopular option when it has merit "
            "and you never agree just to agree.",
        ),
        _spec(
            "systems-thinker",
            "second-order effects, feedback loops, incentives",
            "You are the Systems Thinker. You trace second-order effects, feedback loops "
            "and incentives. You ask what happens a year after the decision, who adapts to "
            "it, and which reversible and irreversible steps it contains.",
        ),
    ],
    "engineering": [
        _spec(
            "risk-auditor",
            "risk, rollback, failure modes",
            "You are the Risk Auditor. You look for what can go wrong, how bad it would be, "
            "and how we would undo it. You insist on rollback plans and blast-radius limits.",
        ),
        _spec(
            "pragmatist",
            "cost, delivery, simplicity",
            "You are the Pragmatist. You care about what ships, what it costs in people and "
            "time, and the simplest thing that will work for the next year.",
        ),
        _spec(
            "user-advocate",
            "users, latency, experience",
            "You are the User Advocate. You judge every option by what users will feel: "
            "latency, reliability, migration pain and trust.",
        ),
        _spec(
            "architect",
            "maintainability, coupling, long-term design",
            "You are the Architect. You weigh long-term design: coupling, maintainability, "
            "operability and how each option constrains the next decisions.",
        ),
    ],
}


def load_roster(spec: str) -> list[PersonaSpec]:
    """A preset name or a roster file path; `auto` is handled by the engine."""
    if spec in PRESETS:
        return list(PRESETS[spec])
    path = Path(spec)
    if not path.is_file():
        names = ", ".join(sorted(PRESETS))
        raise UsageError(
            f"--personas '{spec}' is neither a preset ({names}, or auto with `run`) nor a "
            "roster file; pass one of those."
        )
    return parse_roster(_read_roster(path), str(path))


def _read_roster(path: Path) -> str:
    """The roster file's text, refused before it is parsed when it is over the size limit."""
    with path.open("rb") as stream:
        data = stream.read(MAX_ROSTER_FILE_BYTES + 1)
    if len(data) > MAX_ROSTER_FILE_BYTES:
        raise UsageError(
            f"{path} is over {MAX_ROSTER_FILE_BYTES // 1024} KiB, too large for a roster of "
            f"{MIN_PERSONAS}-{MAX_PERSONAS} personas; shorten the persona bodies."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text; save the roster as UTF-8.") from None


def parse_roster(text: str, where: str) -> list[PersonaSpec]:
    """Parse a roster file: a list of {slug, body|persona, model?, aspects?}."""
    check_length(
        text,
        MAX_ROSTER_FILE_BYTES,
        f"The roster in {where}",
        "Shorten the persona bodies.",
    )
    try:
        data = json.loads(text) if text.lstrip().startswith("[") else strict_yaml.load(text)
    except strict_yaml.YamlRefused as exc:
        raise UsageError(f"{where}: the YAML {exc}.") from None
    except Exception as exc:  # PyYAML's constructors raise KeyError, AttributeError and more
        problem = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"{where} is not valid YAML or JSON: {problem}") from exc
    if isinstance(data, dict) and "personas" in data:
        data = data["personas"]
    if not isinstance(data, list):
        raise UsageError(f"{where} must hold a list of personas, each with slug and body.")
    if len(data) > MAX_PERSONAS:
        raise UsageError(
            f"{where}: a council needs {MIN_PERSONAS}-{MAX_PERSONAS} personas, not {len(data)}."
        )
    personas = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict) or not item.get("slug"):
            raise UsageError(f"{where}: persona {i} needs a 'slug'.")
        body = str(item.get("body") or item.get("persona") or "").strip()
        if not body:
            raise UsageError(
                f"{where}: persona '{item['slug']}' needs a 'body' (the persona text)."
            )
        aspects = item.get("aspects") or []
        if isinstance(aspects, str):
            aspects = [a.strip() for a in aspects.split(",") if a.strip()]
        personas.append(
            PersonaSpec(
                check_slug(str(item["slug"])),
                body,
                str(item.get("model") or ""),
                [str(a) for a in aspects],
            )
        )
    check_roster_size(personas, where)
    return personas


def check_roster_size(personas: list[PersonaSpec], where: str) -> None:
    """A council needs 2-10 personas with distinct slugs."""
    slugs = [p.slug for p in personas]
    if len(set(slugs)) != len(slugs):
        raise UsageError(f"{where}: persona slugs must be distinct.")
    if not MIN_PERSONAS <= len(personas) <= MAX_PERSONAS:
        raise UsageError(
            f"{where}: a council needs {MIN_PERSONAS}-{MAX_PERSONAS} personas, not {len(personas)}."
        )


def person_spec(slug: str) -> PersonaSpec:
    """A seat added for a person (`run --human SLUG` naming no persona of the council)."""
    slug = check_slug(slug)
    body = resources.render("files/person-seat.md.j2", slug=slug).strip()
    return PersonaSpec(slug, body, HUMAN_MODEL, [])


def with_persons(roster: list[PersonaSpec], slugs: list[str]) -> list[PersonaSpec]:
    """The roster with a person in each seat `slugs` names (`run --human`): a persona of
    the roster keeps its text and takes `model: human`; a slug it lacks is a new seat."""
    wanted = list(dict.fromkeys(check_slug(s) for s in slugs))
    seated = [replace(p, model=HUMAN_MODEL) if p.slug in wanted else p for p in roster]
    known = {p.slug for p in roster}
    return seated + [person_spec(slug) for slug in wanted if slug not in known]
