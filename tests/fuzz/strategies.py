"""Hostile input: text that looks almost like our files, with the odd parts fuzzers like."""

from __future__ import annotations

import json

from hypothesis import strategies as st

# Scalars that YAML treats specially, and pieces of our own formats.
YAML_ODDITIES = [
    "2026-11-30",
    "2026-13-45",
    "2026-02-30T25:61:00Z",
    "1e999",
    "-.inf",
    ".nan",
    "0x1F",
    "0o17",
    "~",
    "null",
    "yes",
    "no",
    "!!python/object:os.system x",
    "!!binary aGVsbG8=",
    "!!set {a, b}",
    "!!timestamp 2026-99-99",
    "!!timestamp x",
    "!!bool x",
    "!!int x",
    "!!str [1]",
    "&anchor a",
    "*anchor",
    "*missing",
    "[",
    "]",
    "{",
    "}",
    "[a, [b, {c: d}]]",
    "{a: 1, a: 2}",
    "? [complex, key]",
    "|",
    ">-",
    "'unterminated",
    '"unterminated',
    '"\\x00\\ud800"',
    "\t",
    "- a\n- b",
    "<<: *anchor",
    "\x00",
    "\x85",
    "\ufeff",
    "\u2028",
    "é 中文 🙂",
]
KEYS = [
    "id",
    "topic",
    "status",
    "rounds_planned",
    "current_round",
    "personas",
    "options",
    "name",
    "model",
    "aspects",
    "round_entries",
    "persona",
    "rounds_completed",
    "interrupt_between_rounds",
    "promoted_to_knowledge",
    "flags",
    "seed",
    "1",
    "null",
    "[a]",
    "? x",
]
STATUSES = ["created", "round_1_running", "round_2_complete", "synthesizing", "complete", "x"]
HEADINGS = [
    "## Round 1 — 2026-11-30",
    "## Round 2",
    "## round 99999999999999999999 — x",
    "## Round -1",
    "## Question",
    "## Constraints & Known Facts",
    "## Persona",
    "## Round 2 — Cross-context loaded",
    "## Round 3 — Directives",
    "### Executive Summary",
    "### executive summary:",
    "### Position",
    "### Reasoning",
    "### Reactions to peers",
    "### Open questions",
    "### Cross-examination",
    "# Title",
    "#### Deep",
    "```",
    "```verdict",
    "```claims",
    "~~~",
    "````",
    "- bullet",
    "stance: A",
    "conviction: 101",
    "conviction: 55%",
    "headline: Go",
    "concession: none",
    "Score: 7/10",
    "---",
]

small_text = st.text(max_size=40)
any_text = st.text(max_size=400)
yaml_scalar = st.one_of(
    st.sampled_from(YAML_ODDITIES),
    small_text,
    st.floats().map(str),
    st.sampled_from(["120.0", "1.", "-0.5", "+3.25", "01.5", "1.5e3", "1_0.0", "1.2.3"]),
)


@st.composite
def yaml_block(draw: st.DrawFn) -> str:
    """Lines of `key: value`, lists and oddities, as a frontmatter block might hold."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        key = draw(st.one_of(st.sampled_from(KEYS), small_text))
        shape = draw(st.integers(0, 4))
        if shape == 0:
            lines.append(f"{key}: {draw(yaml_scalar)}")
        elif shape == 1:
            items = draw(st.lists(yaml_scalar, max_size=3))
            lines.append(f"{key}:")
            lines += [f"  - {item}" for item in items]
        elif shape == 2:
            lines.append(f"{key}:")
            for _ in range(draw(st.integers(0, 2))):
                lines.append(f"  - key: {draw(yaml_scalar)}")
                lines.append(f"    label: {draw(yaml_scalar)}")
        elif shape == 3:
            lines.append(draw(yaml_scalar))
        else:  # a map, its fields at one indent or (sometimes) at two
            lines.append(f"{key}:")
            indents = draw(st.lists(st.sampled_from([" ", "  ", "   "]), min_size=1, max_size=2))
            for _ in range(draw(st.integers(0, 3))):
                field = draw(st.one_of(st.sampled_from(KEYS), small_text))
                lines.append(f"{draw(st.sampled_from(indents))}{field}: {draw(yaml_scalar)}")
    return "\n".join(lines)


@st.composite
def markdown_body(draw: st.DrawFn) -> str:
    """Headings, fences, verdict-ish lines and text, in any order."""
    parts = draw(st.lists(st.one_of(st.sampled_from(HEADINGS), small_text), max_size=25))
    return "\n".join(parts)


@st.composite
def frontmatter_document(draw: st.DrawFn) -> str:
    """`---`, a YAML-ish block, `---`, a markdown body; sometimes broken on purpose."""
    opening = draw(st.sampled_from(["---", "---", "----", "--- ", "---x", ""]))
    closing = draw(st.sampled_from(["---", "---", "-----", "", "--- #"]))
    return f"{opening}\n{draw(yaml_block())}\n{closing}\n{draw(markdown_body())}"


@st.composite
def debate_document(draw: st.DrawFn) -> str:
    """A debate.md whose known keys hold values of any type."""
    values = {
        "id": draw(st.one_of(st.just("council_AbC12345"), yaml_scalar)),
        "topic": draw(yaml_scalar),
        "status": draw(st.one_of(st.sampled_from(STATUSES), yaml_scalar)),
        "rounds_planned": draw(st.one_of(st.integers(-3, 12).map(str), yaml_scalar)),
        "current_round": draw(st.one_of(st.integers(-3, 12).map(str), yaml_scalar)),
    }
    lines = [f"{k}: {v}" for k, v in values.items() if draw(st.booleans()) or k == "id"]
    lines.append(draw(yaml_block()))
    return f"---\n{chr(10).join(lines)}\n---\n\n{draw(markdown_body())}\n"


@st.composite
def context_document(draw: st.DrawFn) -> str:
    """A context-and-persona.md whose known keys hold values of any type."""
    lines = []
    for key in ("name", "model", "aspects", "round_entries"):
        if draw(st.booleans()):
            continue
        if draw(st.booleans()):
            lines.append(f"{key}: {draw(yaml_scalar)}")
        else:
            lines.append(f"{key}:")
            lines += [f"  - {item}" for item in draw(st.lists(yaml_scalar, max_size=3))]
    lines.append(draw(yaml_block()))
    return f"---\n{chr(10).join(lines)}\n---\n\n{draw(markdown_body())}\n"


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**20), 10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        small_text,
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(small_text, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def verdicts_document(draw: st.DrawFn) -> str:
    """verdicts.json shaped text: right keys, wrong types, NaN, unicode digits, junk."""
    option = st.fixed_dictionaries({"key": json_values, "label": json_values})
    verdict = st.fixed_dictionaries(
        {"stance": json_values},
        optional={
            "conviction": st.one_of(json_values, st.integers(-5, 105)),
            "headline": json_values,
            "concession": json_values,
            "at": json_values,
        },
    )
    round_key = st.one_of(st.integers(0, 12).map(str), st.sampled_from(["²", "١", "x", "-1"]))
    data = draw(
        st.one_of(
            st.fixed_dictionaries(
                {},
                optional={
                    "options": st.one_of(st.lists(option, max_size=3), json_values),
                    "rounds": st.one_of(
                        st.dictionaries(
                            round_key,
                            st.one_of(
                                st.dictionaries(small_text, verdict, max_size=3), json_values
                            ),
                            max_size=3,
                        ),
                        json_values,
                    ),
                },
            ),
            json_values,
        )
    )
    text = json.dumps(data, allow_nan=True)
    if draw(st.booleans()):
        return text
    cut = draw(st.integers(0, len(text)))
    return text[:cut] + draw(small_text)


def verdict_block(draw: st.DrawFn) -> str:
    fence = draw(st.sampled_from(["```", "~~~", "````", "```"]))
    info = draw(st.sampled_from(["verdict", "VERDICT", " verdict ", "verdicts", ""]))
    fields = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["stance", "conviction", "headline", "concession", "**stance**"]),
                st.one_of(
                    st.sampled_from(
                        ["A", "B", "a", "Migrate now", "55", "101", "-1", "55%", "abc"]
                    ),
                    small_text,
                ),
            ),
            max_size=6,
        )
    )
    body = "\n".join(f"{k}: {v}" for k, v in fields)
    return f"{fence}{info}\n{body}\n{fence}"


@st.composite
def persona_answer(draw: st.DrawFn) -> str:
    """A model's answer: sections, maybe a verdict block (or two), maybe junk around it."""
    parts = [draw(markdown_body())]
    for _ in range(draw(st.integers(0, 2))):
        parts.append(verdict_block(draw))
    parts.append(draw(small_text))
    return "\n".join(draw(st.permutations(parts)))


@st.composite
def claims_answer(draw: st.DrawFn) -> str:
    """A synthesizer's report with zero, one or two ```claims blocks of odd JSON."""
    claim = st.fixed_dictionaries(
        {},
        optional={
            "claim": json_values,
            "proposer": st.one_of(st.sampled_from(["risk-auditor", "growth-cfo"]), json_values),
            "round": st.one_of(st.integers(-1, 4), json_values),
            "supporters": st.one_of(st.lists(st.sampled_from(["growth-cfo", "x"])), json_values),
            "challengers": st.one_of(st.lists(st.sampled_from(["risk-auditor", "y"])), json_values),
            "retracted": json_values,
            "research": json_values,
            "extra": json_values,
        },
    )
    blocks = []
    for _ in range(draw(st.integers(0, 2))):
        data = draw(st.one_of(st.lists(claim, max_size=4), json_values))
        text = json.dumps(data, allow_nan=True)
        if draw(st.booleans()):
            text = text[: draw(st.integers(0, len(text)))]
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        info = draw(st.sampled_from(["claims", "claims json", "CLAIMS", "claim"]))
        blocks.append(f"{fence}{info}\n{text}\n{fence}")
    return "\n\n".join([draw(markdown_body()), *blocks, draw(small_text)])
