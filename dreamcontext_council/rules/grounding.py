"""Grounding and pre-flight: attachments are checked, and a question that cannot be debated stops the run.

A council over a missing artifact still runs: every persona then asks for the design
or invents one, and the user pays for rounds of fabrication. `run` therefore reads
the question before the first model call and stops, spending nothing, when it finds
one of the problems below (`--yes` skips the check). The rules are meant to catch a
question left unfinished, not to judge ordinary prose, so each one looks for a form
that only a gap takes.

Placeholders:

1. **An instruction in brackets.** Text inside `[…]`, `{…}` or `<…>` (one line, at most
   80 characters) is a placeholder when it speaks to whoever fills the question in:
   it starts with a verb that always asks for text (`describe`, `explain`, `specify`,
   `elaborate`, `summarize`), or with another writing verb followed by what to write
   (`insert diagram`, `paste code here`, `add numbers`, `fill in`), or it holds
   `here`, `your` or `placeholder` (`<your design here>`, `[link here]`).
2. **A gap in brackets.** Brackets holding only an ellipsis, question marks, `xxx` or
   underscores (`{…}`, `<...>`, `[???]`), or starting with a marker (`{TBD}`,
   `[TODO: numbers]`). `[…]` inside quotation marks is an elision, not a gap.
3. **A marker.** `TODO`, `TBD`, `FIXME` or `XXX` written as a marker: opening a
   sentence or line with a colon (`TODO: describe the plan`), standing alone as a
   sentence, a line or the value after a colon (`Design: TBD`), or alone in
   parentheses (`(TBD)`). Used as a word it passes: "Use TODO comments or issue
   links?", "Should TODO: comments fail the build?", "The launch date is TBD; should
   we start now?".
4. **A blank**: three or more underscores inside a line ("use ___ for sessions").
5. **Filler**: `lorem ipsum dolor…`, or `lorem ipsum` opening the question or a line.
   A question about it ("Should mockups use lorem ipsum or real copy?") passes.
6. **Nothing but a gap**: a question with no letter or digit at all (`…`, `...`, `???`,
   `--`), as an example command leaves its `--topic "…"` for the reader to fill.

Brackets that are code are never placeholders: a bracket opened right after a
letter, digit, `)` or `]` (`arr[...]`, `Vec<T>`, `Callable[..., T]`), anything in
`backticks` or in a fenced block, and brackets whose words are not instructions
(`[] or {}`, `[as in Timsort]`, `{env}`, `React <18>`, `<required>`).

An artifact nobody attached: the question names one with a pointing word, "this
design", "this code", "this document", "the following plan", "the above diff" (also
doc, diff, patch, PR, pull request, plan, proposal, spec, RFC, architecture, draft,
file, snippet, schema, config, implementation, migration, script, query), and no file
is attached. It passes when the question carries the artifact itself: a fenced
block, or at least 15 words in its other sentences ("We move sessions … . Is this
plan safe?"). A compound that names something else passes ("this code review
checklist", "this codebase"). "The attached …", "see attached" and "the enclosed …"
always need an attachment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.limits import MAX_ATTACHMENTS

MAX_ATTACHMENT_BYTES = 512 * 1024
MAX_TOTAL_ATTACHMENT_BYTES = 1024 * 1024
MATERIAL_WORDS = 15
_BRACKET_TEXT = 80

# Verbs that always ask for text, even alone ("[describe]").
_ASKING_VERBS = {"describe", "explain", "specify", "elaborate", "summarize", "summarise"}
# Writing verbs that are a placeholder only with what to write after them ("[add numbers]");
# alone they are often labels ("the [Add] button", the [Insert] key).
_WRITING_VERBS = {
    "insert", "paste", "add", "enter", "write", "put", "fill", "replace", "provide",
    "include", "attach", "type", "list", "link", "drop",
}  # fmt: skip
_ADDRESS_WORDS = {"here", "your", "yours", "placeholder"}
_MARKERS = ("TODO", "TBD", "FIXME", "XXX")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")

_CODE_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^ {0,3}\1[ \t]*$|\Z)", re.M | re.S)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)[^\n]*?(?<!`)\1(?!`)")
_QUOTED = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”")
# A bracket right after a word character, `)` or `]` is code: indexing, generics, calls.
_BRACKETS = re.compile(
    rf"(?<![\w)\]])(?:\[(?P<square>[^\[\]\n]{{0,{_BRACKET_TEXT}}})\](?!\()"
    rf"|\{{(?P<brace>[^{{}}\n]{{0,{_BRACKET_TEXT}}})\}}"
    rf"|<(?P<angle>[^<>\s][^<>\n]{{0,{_BRACKET_TEXT - 1}}})>)"
)
_GAP = re.compile(r"(?:\.{2,}|…+|\?+|x{3,}|_{3,})", re.I)
_MARKER_START = re.compile(rf"^(?:{'|'.join(_MARKERS)})\b", re.I)
_MARKER_OPENS = re.compile(rf"^\W*(?:{'|'.join(_MARKERS)})\s*:")
_MARKER_PARENS = re.compile(rf"\(\s*(?:{'|'.join(_MARKERS)})\s*\)", re.I)
_MARKER_ALONE = re.compile(rf"^\W*(?:{'|'.join(_MARKERS)})\W*$", re.I)
_BLANK = re.compile(r"(?<!\w)_{3,}(?!\w)")
_FILLER = re.compile(r"lorem\s+ipsum\s+dolor|^\s*lorem\s+ipsum\b", re.I | re.M)
_WORD = re.compile(r"[\w'’]+")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+|\n+")

_NOUNS = (
    r"design(?:\s+doc(?:ument)?)?+|document|doc|code|diff|patch|pr|pull\s+request|plan|"
    r"proposal|spec|specification|rfc|architecture|draft|file|snippet|schema|config|"
    r"configuration|implementation|migration|script|query"
)
# Words that turn the noun into another thing: "this code review checklist", "this design system".
_COMPOUNDS = (
    r"review|reviews|reviewer|reviewers|reviewing|style|styles|quality|coverage|freeze|"
    r"owner|owners|ownership|base|smell|smells|of\s+conduct|system|systems|team|teams|"
    r"principle|principles|process|language|format"
)
_POINTING = re.compile(
    rf"\b(?:this|the\s+following|the\s+above)\s+(?P<noun>{_NOUNS})s?\b(?![-/])"
    rf"(?!\s+(?:{_COMPOUNDS})\b(?!-))",
    re.I,
)
_ATTACHED = re.compile(
    rf"\b(?:(?:the|see|as|per)\s+(?:attached|enclosed)|(?:attached|enclosed)\s+(?:{_NOUNS})s?)\b",
    re.I,
)


@dataclass(frozen=True)
class Problem:
    """One reason the question cannot be debated as written."""

    kind: str  # "placeholder" or "reference"
    found: str
    why: str


def _blank_out(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _prose(question: str) -> str:
    """The question with code (fenced blocks, code spans) blanked out, offsets kept."""
    return _blank_out(_blank_out(question, _CODE_FENCE), _CODE_SPAN)


def _bracket_problem(kind: str, inner: str, quoted: bool) -> str | None:
    text = inner.strip()
    if not text:
        return None
    if _GAP.fullmatch(text):
        if kind == "square" and quoted:
            return None  # "[…]" in a quotation marks an elision
        return "a gap in brackets"
    if _MARKER_START.match(text):
        return "a marker in brackets"
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    if not words:
        return None
    if words[0] in _ASKING_VERBS or (words[0] in _WRITING_VERBS and len(words) > 1):
        return "an instruction in brackets"
    if _ADDRESS_WORDS & set(words):
        return "an instruction in brackets"
    return None


def _in_spans(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def placeholders(question: str) -> list[Problem]:
    """Unfilled placeholders in the question, in the order they appear."""
    prose = _prose(question)
    quotes = [m.span() for m in _QUOTED.finditer(prose)]
    found: list[tuple[int, int, Problem]] = []

    def add(start: int, text: str, why: str) -> None:
        end = start + len(text)
        if not any(start < e and s < end for s, e, _ in found):  # one report per stretch
            found.append((start, end, Problem("placeholder", question[start:end].strip(), why)))

    for match in _BRACKETS.finditer(prose):
        kind = match.lastgroup or "square"
        why = _bracket_problem(kind, match.group(kind), _in_spans(match.start(), quotes))
        if why:
            add(match.start(), match.group(0), why)
    for pattern, why in (
        (_MARKER_PARENS, "a TODO-style marker"),
        (_BLANK, "a blank to fill in"),
        (_FILLER, "lorem ipsum filler"),
    ):
        for match in pattern.finditer(prose):
            add(match.start(), match.group(0), why)
    for start, piece in _split_sentences(prose):
        marker = _MARKER_ALONE.match(piece) or _MARKER_OPENS.match(piece)
        if marker:
            add(start, marker.group(0), "a TODO-style marker")
    if question.strip() and not _LETTER_OR_DIGIT.search(question) and not found:
        add(0, question, "no question, only a gap to fill in")
    found.sort(key=lambda item: item[0])
    return [problem for _, _, problem in found]


def _carries_material(question: str, sentence_spans: list[tuple[int, int]]) -> bool:
    """True when the question holds the artifact itself (a fenced block, or enough prose)."""
    if _CODE_FENCE.search(question):
        return True
    other = [
        piece
        for piece in _split_sentences(question)
        if not any(start <= piece[0] < end for start, end in sentence_spans)
    ]
    return sum(len(_WORD.findall(text)) for _, text in other) >= MATERIAL_WORDS


def _split_sentences(text: str) -> list[tuple[int, str]]:
    pieces: list[tuple[int, str]] = []
    offset = 0
    for piece in _SENTENCE_END.split(text):
        start = text.find(piece, offset)
        offset = start + len(piece)
        if piece.strip():
            pieces.append((start, piece))
    return pieces


def unattached_references(question: str) -> list[Problem]:
    """References to an artifact that is neither attached nor in the question (call when nothing is attached)."""
    prose = _prose(question)
    problems = [
        Problem("reference", question[m.start() : m.end()], "it says the artifact is attached")
        for m in _ATTACHED.finditer(prose)
    ]
    pointing = list(_POINTING.finditer(prose))
    if pointing:
        sentences = _split_sentences(prose)
        spans = [
            (start, start + len(text))
            for start, text in sentences
            if any(start <= m.start() < start + len(text) for m in pointing)
        ]
        if not _carries_material(question, spans):
            problems += [
                Problem(
                    "reference",
                    question[m.start() : m.end()],
                    "the question neither holds nor attaches it",
                )
                for m in pointing
            ]
    return problems


def question_problems(question: str, *, attached: bool) -> list[Problem]:
    """Everything the pre-flight guard would stop on, placeholders first."""
    problems = placeholders(question)
    if not attached:
        problems += unattached_references(question)
    return problems


def preflight(question: str, *, attached: bool, debate_id: str | None = None) -> None:
    """Stop before any call when the question cannot be debated as written (`--yes` skips this).

    `debate_id` names an existing debate: the advice then says to start a new one.
    """
    problems = question_problems(question, attached=attached)
    if not problems:
        return
    lines = ["The question cannot be debated as written:"]
    for problem in problems:
        if problem.kind == "placeholder":
            lines.append(f"  - it still holds {problem.why}: {problem.found!r}")
        else:
            lines.append(
                f"  - it refers to {problem.found!r} but nothing is attached, so every persona "
                "would have to invent it"
            )
    kinds = {p.kind for p in problems}
    steps = []
    if "placeholder" in kinds:
        steps.append("fill in the placeholder")
    if "reference" in kinds:
        steps.append("attach the artifact with --attach FILE (or paste it into the question)")
    fix = " and ".join(steps)
    fix = fix[0].upper() + fix[1:]
    if debate_id:
        fix = (
            f"{debate_id} was created with this question; start a new debate with it completed "
            "(`dreamcontext council run --topic … --attach FILE`)"
        )
    lines.append(f"{fix}, or pass --yes to run anyway. Nothing was called or spent.")
    raise UsageError("\n".join(lines))


def check_attachments(paths: list[str]) -> list[Path]:
    """Existing, non-empty UTF-8 text files under the size limits with distinct names.

    Called before anything is written, so a refused file leaves no trace.
    """
    if len(paths) > MAX_ATTACHMENTS:
        raise UsageError(
            f"{len(paths)} attachments are too many; a debate takes at most {MAX_ATTACHMENTS}. "
            "Attach the files that matter, or join related ones."
        )
    checked: list[Path] = []
    names: dict[str, str] = {}
    total = 0
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise UsageError(f"Attachment {raw} does not exist; check the path.")
        if not path.is_file():
            raise UsageError(f"Attachment {raw} is not a file; attach the files themselves.")
        size = path.stat().st_size
        if size > MAX_ATTACHMENT_BYTES:
            raise UsageError(
                f"Attachment {raw} is too large: {size:,} bytes, and the limit is "
                f"{MAX_ATTACHMENT_BYTES:,}. Attach the relevant part instead."
            )
        data = path.read_bytes()
        if b"\x00" in data:
            raise UsageError(
                f"Attachment {raw} is a binary file; attach text (markdown, code, a diff)."
            )
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"Attachment {raw} is not UTF-8 text; convert it first (for example with iconv)."
            ) from None
        if not text.strip():
            raise UsageError(f"Attachment {raw} is empty; a council cannot read an empty file.")
        if path.name.startswith("."):
            raise UsageError(
                f"Attachment {raw} has a hidden name; rename it without the leading dot."
            )
        key = path.name.casefold()
        if key in names:
            raise UsageError(
                f"Attachments {names[key]} and {raw} have the same name; rename one of them."
            )
        names[key] = raw
        total += len(data)
        if total > MAX_TOTAL_ATTACHMENT_BYTES:
            raise UsageError(
                f"The attachments come to more than {MAX_TOTAL_ATTACHMENT_BYTES:,} bytes together; "
                "attach the relevant parts instead."
            )
        checked.append(path)
    return checked
