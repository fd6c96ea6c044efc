"""The dashboard's page for an eval, and the list of the evals under a root.

An eval folder (`_dream_context/evals/<id>/`) may come from someone else's repository, so
everything on these pages is untrusted: the id must be a plain name and the folder must stay
inside `evals/`; every file is read by `EvalFolder` and the safe-read layer (no link out of the
eval folder, no FIFO, a size limit); text is cut to one line with its control characters
removed and escaped by the templates; and a file that does not read or parse becomes a
problem the page names, with what to do, instead of an error.

The answers of each method come from `evaluation.results.method_answers`, the reader that
writes results.json; the method table and the plot come from results.json itself, checked
field by field, and the plot is drawn again from those numbers by the same SVG builder (the
`accuracy-cost.svg` on disk is never shown: it could hold anything).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from markupsafe import Markup

from dreamcontext_council.actions.files import DebateFiles
from dreamcontext_council.errors import CouncilError, FormatError, NotFoundError, UsageError
from dreamcontext_council.evaluation.figures import Results, accuracy_cost_plot, read_results
from dreamcontext_council.evaluation.folder import MATCH, METHODS, EvalFolder
from dreamcontext_council.evaluation.results import method_answers
from dreamcontext_council.folder.names import check_debate_id
from dreamcontext_council.folder.paths import Root
from dreamcontext_council.rules.eval_set import EvalQuestion, is_right
from dreamcontext_council.views.contained import is_inside
from dreamcontext_council.views.eval_names import EVAL_ID, eval_ids, one_line
from dreamcontext_council.views.eval_results import METHOD_TITLES
from dreamcontext_council.views.html import render_page

QUESTION_CHARS = 120
ANSWER_CHARS = 60
T = TypeVar("T")
# debate id → its status.
Statuses = Mapping[str, str]


def check_eval_id(value: str) -> str:
    """The id if it is a plain folder name (letters, digits, `_`, `.`, `-`), else UsageError."""
    if not EVAL_ID.fullmatch(value):
        raise UsageError(
            f"{one_line(value, 80)!r} is not an eval id; ids look like eval-arith-1a2b3c4d."
        )
    return value


def open_eval(root: Root, eval_id: str) -> EvalFolder:
    """The eval folder `eval_id`; NotFoundError unless it is a folder inside `evals/`."""
    folder = EvalFolder(root, check_eval_id(eval_id))
    evals = root.evals
    if (
        not folder.path.is_dir()
        or not is_inside(evals, root.path)
        or not is_inside(folder.path, evals)
    ):
        raise NotFoundError(f"No eval {eval_id} under {evals}.")
    return folder


# -- the questions -----------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One method's answer to one question."""

    answer: str  # "" for no answer
    right: bool


@dataclass(frozen=True)
class QuestionLine:
    id: str
    question: str  # cut to one line
    full: str  # longer, for the title attribute
    answer: str
    debate: str | None
    state: str  # done, running, waiting
    cells: dict[str, Cell] = field(default_factory=dict)
    problem: str = ""


@dataclass
class EvalContents:
    """What the eval folder holds, each part read once; `problems` says what did not read."""

    questions: list[EvalQuestion] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)
    debates: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def samples(self) -> int | str:
        """The eval's self-consistency setting: a number of samples, or `match`."""
        value = self.settings.get("samples")
        if value == MATCH:
            return MATCH
        return value if isinstance(value, int) and 0 <= value <= 1000 else 0

    @property
    def answer_type(self) -> str:
        value = self.settings.get("answer_type")
        return value if value in ("option", "number", "exact") else "exact"

    @property
    def methods(self) -> list[str]:
        return [m for m in METHODS if m != "self-consistency" or self.samples]


def _problem(exc: Exception, name: str, folder: EvalFolder) -> str:
    if isinstance(exc, CouncilError):
        return one_line(exc, 400)
    return one_line(
        f"{folder.path / name} is not valid JSON ({exc}); restore it from git or delete the "
        "eval folder and run the eval again.",
        400,
    )


def _read_part(
    folder: EvalFolder, name: str, read: Callable[[], T], problems: list[str]
) -> T | None:
    """One file of the eval through its EvalFolder reader; None, with a problem, when it fails."""
    try:
        return read()
    except FileNotFoundError:
        if name != "debates.json":  # not written until the first debate is made
            problems.append(
                f"{folder.path / name} is missing; this is not a whole eval folder "
                "(run `dreamcontext council eval SET.jsonl` to make one)."
            )
    except OSError as exc:
        problems.append(
            f"{folder.path / name} cannot be read ({exc.strerror}); check its permissions."
        )
    except (CouncilError, ValueError) as exc:
        if isinstance(exc, UsageError) and name == "set.jsonl":
            exc = FormatError(
                f"{folder.path / name}: {exc} Restore it from git or run the eval again."
            )
        problems.append(_problem(exc, name, folder))
    return None


def read_contents(folder: EvalFolder) -> EvalContents:
    """set.jsonl, eval.json and debates.json; a part that fails is left empty and named."""
    contents = EvalContents()
    problems = contents.problems
    contents.questions = _read_part(folder, "set.jsonl", folder.questions, problems) or []
    contents.settings = _read_part(folder, "eval.json", folder.settings, problems) or {}
    contents.debates = _read_part(folder, "debates.json", folder.debates, problems) or {}
    debates = folder.path / "debates.json"
    if debates.exists() and not debates.is_file():  # EvalFolder.debates() passes it over
        contents.problems.append(
            f"{debates} is not a regular file (a FIFO, device or folder); it is not read. "
            "Replace it with the file itself or delete it."
        )
    return contents


def question_state(folder: EvalFolder, debate: str | None, statuses: Statuses, qid: str) -> str:
    """done (its debate is complete and its solo answer saved), running, or waiting."""
    if debate is None:
        return "waiting"
    if statuses.get(debate) == "complete" and folder.solo_answer(qid).is_file():
        return "done"
    return "running"


def _debate_of(contents: EvalContents, qid: str) -> tuple[str | None, str]:
    given = contents.debates.get(qid)
    if given is None:
        return None, ""
    try:
        return check_debate_id(given), ""
    except UsageError:
        return (
            None,
            f"debates.json names {one_line(given, 40)!r} for this question, not a debate id.",
        )


def question_lines(
    root: Root, folder: EvalFolder, contents: EvalContents, statuses: Statuses
) -> list[QuestionLine]:
    """One line per question; the answers of the questions that are done."""
    lines = []
    for question in contents.questions:
        debate, problem = _debate_of(contents, question.id)
        state = question_state(folder, debate, statuses, question.id)
        cells: dict[str, Cell] = {}
        if state == "done":
            try:
                answers = method_answers(root, folder, question, contents.samples)
            except CouncilError as exc:
                problem = one_line(exc, 400)
            except (ValueError, OSError) as exc:
                problem = one_line(
                    f"its answers cannot be read ({exc}); restore the eval folder and its "
                    "debate from git, or run the eval again.",
                    400,
                )
            else:
                cells = {
                    m: Cell(
                        one_line(answers.get(m) or "", ANSWER_CHARS),
                        is_right(answers.get(m), question, contents.answer_type),
                    )
                    for m in contents.methods
                }
        lines.append(
            QuestionLine(
                id=question.id,
                question=one_line(question.question, QUESTION_CHARS),
                full=one_line(question.question, 1000),
                answer=one_line(question.answer, ANSWER_CHARS),
                debate=debate,
                state=state,
                cells=cells,
                problem=problem,
            )
        )
    return lines


# -- the page and the list ----------------------------------------------------------------


@dataclass(frozen=True)
class EvalPage:
    id: str
    size: int
    done: int
    answer_type: str
    settings: list[tuple[str, str]]  # models, personas, rounds, samples
    methods: list[tuple[str, str]]  # the question table's columns: (method, title)
    results: Results | None
    plot: Markup | None
    figures_note: str  # empty when the figures cover every question as it stands
    rows: list[QuestionLine]
    problems: list[str]


def _settings_shown(settings: dict[str, Any]) -> list[tuple[str, str]]:
    shown = []
    for key, title in (
        ("model", "Model"),
        ("synth_model", "Solo and synthesis model"),
        ("personas", "Personas"),
        ("rounds", "Rounds"),
        ("samples", "Self-consistency samples"),
    ):
        value = settings.get(key)
        if key == "synth_model" and value is None:
            value = settings.get("model")
        if value is None or isinstance(value, dict | list):
            value = "default" if key in ("model", "synth_model") else "—"
        shown.append((title, one_line(value, 80)))
    return shown


def figures_note(results: Results | None, size: int, done: int) -> str:
    """Whether the method table covers the eval as it stands, and if not, what it covers."""
    if results is None:
        return (
            "No results.json yet: the figures are written when the eval ends; "
            f"{done} of {size} questions are done."
        )
    if results.questions != size or done < size:
        return (
            f"The figures are from the last results.json (written {results.written}, "
            f"{results.questions} questions); {done} of {size} questions are done now."
        )
    return ""


def debate_statuses(root: Root, contents: EvalContents) -> dict[str, str]:
    """The status of each of the eval's debates, from its own debate.md (through the parse
    cache): the root's index is brought up to date only when the eval ends, and the
    dashboard's copy of it may be two seconds old. A debate that cannot be read is left
    out (its question shows as running)."""
    found = {}
    for question in contents.questions:
        debate, _ = _debate_of(contents, question.id)
        if debate is None:
            continue
        try:
            found[debate] = str(DebateFiles(root, debate).debate().status)
        except (CouncilError, OSError, ValueError):
            continue
    return found


def build_eval_page(root: Root, eval_id: str) -> EvalPage:
    """The eval's page; NotFoundError when there is no such eval under the root."""
    folder = open_eval(root, eval_id)
    contents = read_contents(folder)
    rows = question_lines(root, folder, contents, debate_statuses(root, contents))
    done = sum(row.state == "done" for row in rows)
    problems = list(contents.problems) + [f"{row.id}: {row.problem}" for row in rows if row.problem]
    try:
        results = read_results(folder)
    except CouncilError as exc:
        results = None
        problems.append(one_line(exc, 400))
    return EvalPage(
        id=folder.id,
        size=len(contents.questions),
        done=done,
        answer_type=contents.answer_type,
        settings=_settings_shown(contents.settings),
        methods=[(m, METHOD_TITLES[m]) for m in contents.methods],
        results=results,
        plot=accuracy_cost_plot(results) if results else None,
        figures_note=figures_note(results, len(contents.questions), done),
        rows=rows,
        problems=problems,
    )


@dataclass(frozen=True)
class EvalSummary:
    """One eval on the list: its size, how far it is, council against solo."""

    id: str
    size: int
    done: int
    council: str  # accuracy as shown, or "—"
    solo: str
    problem: str


def _accuracy(results: Results | None, method: str) -> str:
    for line in results.methods if results else []:
        if line.method == method:
            return f"{line.accuracy:.0%} ({line.right}/{line.questions})"
    return "—"


def eval_summaries(root: Root) -> list[EvalSummary]:
    """Every eval under the root, with what its folder says (a bad file: a problem)."""
    summaries = []
    for eval_id in eval_ids(root):
        folder = EvalFolder(root, eval_id)
        contents = read_contents(folder)
        problems = list(contents.problems)
        statuses = debate_statuses(root, contents)
        done = 0
        for question in contents.questions:
            debate, _ = _debate_of(contents, question.id)
            done += question_state(folder, debate, statuses, question.id) == "done"
        try:
            results = read_results(folder)
        except CouncilError as exc:
            results = None
            problems.append(one_line(exc, 400))
        summaries.append(
            EvalSummary(
                id=eval_id,
                size=len(contents.questions),
                done=done,
                council=_accuracy(results, "council"),
                solo=_accuracy(results, "solo"),
                problem=problems[0] if problems else "",
            )
        )
    return summaries


def eval_html(page: EvalPage, *, fragment: bool = False) -> str:
    """An eval's page; `fragment` is its live part only."""
    return render_page("eval_body.html.j2" if fragment else "eval.html.j2", export=False, page=page)


def evals_html(evals: list[EvalSummary], *, fragment: bool = False) -> str:
    """The list of the evals under the root; `fragment` is its live part only."""
    return render_page(
        "evals_body.html.j2" if fragment else "evals.html.j2", export=False, evals=evals
    )
