"""The pre-flight rules on their own: what is a placeholder, what is an artifact nobody attached.

Each stopped question names what stops it, so a rule that fires on the wrong words fails.
"""

from __future__ import annotations

import pytest

from dreamcontext_council.errors import UsageError
from dreamcontext_council.rules.grounding import placeholders, preflight, question_problems

# question → the text the guard must quote
PLACEHOLDERS = {
    "Is [describe your design] safe for production?": "[describe your design]",
    "Is [describe] safe for production?": "[describe]",
    "Review the session store: <paste code here>": "<paste code here>",
    "Should we adopt <your design here>?": "<your design here>",
    "Our design doc says {TBD}": "{TBD}",
    "Should we migrate the session store to {…}?": "{…}",
    "Should we migrate the session store to {...}?": "{...}",
    "Should we ship [...] before the freeze?": "[...]",
    "Is [???] the right queue for billing events?": "[???]",
    "[Insert architecture diagram] Does the new cache scale?": "[Insert architecture diagram]",
    "Should we adopt [add the vendor name] for billing?": "[add the vendor name]",
    "Is {your_service} ready for general availability?": "{your_service}",
    "Compare <option A here> with Redis.": "<option A here>",
    "TODO: describe the migration. Is it safe?": "TODO:",
    "FIXME: fill in the question": "FIXME:",
    "Is the rollout plan (TBD) safe for Friday?": "(TBD)",
    "Should we migrate to Postgres?\nTODO": "TODO",
    "Should we hire two engineers? Budget: TBD.": "TBD.",
    "Should we pick ___ or Redis for sessions?": "___",
    "Lorem ipsum dolor sit amet: should we ship it?": "Lorem ipsum dolor",
    "lorem ipsum": "lorem ipsum",
    "…": "…",
    " ... ": "...",
    "???": "???",
}

ORDINARY = [
    "Should we use [] or {} for empty literals in our Python style guide?",
    "Is O(n log n) sorting [as in Timsort] fast enough?",
    "Should config use {env} interpolation syntax?",
    "Should we store dates as {year}-{month}-{day} strings or timestamps?",
    "Should we use {{ var }} or ${var} in templates?",
    "Should `{name}` or `<your-name>` be the template syntax?",
    "Should we adopt React <18> features?",
    "Is Vec<T> or Box<[T]> the better return type for the parser?",
    "Should our CLI usage show <required> and [optional] arguments?",
    "Is p99 < 200 ms here and > 100 ms there acceptable?",
    "Is arr[...] = 0 clearer than arr[:] = 0 in numpy code?",
    "Should we keep Callable[..., Awaitable[T]] in the public API?",
    "Should the button say [Add] or [Create]?",
    "Should our PR template use [x] checkboxes?",
    "Should we follow the [Google style guide](https://google.github.io/styleguide/) for your team?",
    'The RFC says "we will [...] migrate in place" - is that safe?',
    "Use TODO comments or issue links?",
    "Should the linter flag TODO and FIXME markers in CI?",
    "Should TODO: comments fail the build?",
    "What should we do about TODOs in the codebase?",
    "The launch date is TBD; should we start the migration now?",
    "Should mockups use lorem ipsum or real copy?",
    "Should we adopt Rust for the ingest service?",
]


@pytest.mark.parametrize("question", list(PLACEHOLDERS))
def test_an_unfilled_placeholder_is_found(question: str) -> None:
    found = placeholders(question)

    assert [p.found for p in found] == [PLACEHOLDERS[question]]
    with pytest.raises(UsageError) as stopped:
        preflight(question, attached=True)  # an attachment does not fill a placeholder
    message = str(stopped.value)
    assert repr(PLACEHOLDERS[question]) in message
    assert "--yes" in message
    assert "Nothing was called or spent." in message


@pytest.mark.parametrize("question", ORDINARY)
def test_an_ordinary_question_with_brackets_passes(question: str) -> None:
    assert question_problems(question, attached=False) == []
    preflight(question, attached=False)


# question → the reference the guard must quote when nothing is attached
REFERENCES = {
    "Is this design safe?": "this design",
    "Given this design, should we ship Friday or wait until Monday after the freeze?": "this design",
    "Is this document accurate?": "this document",
    "Should we merge this code?": "this code",
    "Can you review this PR before Friday?": "this PR",
    "Is the following plan safe?": "the following plan",
    "Is this design doc review-ready?": "this design doc",
    "What does the attached benchmark tell us about Redis?": "the attached",
    "See attached. Should we go ahead?": "See attached",
    "Is the enclosed proposal worth funding?": "the enclosed",
    "Does the attached diff break the API?": "the attached",
    "Please weigh the attached file against our SLOs.": "the attached",
    "Can you review attached code before Friday?": "attached code",
    # "attached" always means a file, however much the question says besides.
    "Is the attached plan safe? It moves sessions from Redis to Postgres with dual writes "
    "for two weeks and then flips reads to the new store.": "the attached",
}

GROUNDED_WITHOUT_ATTACHMENT = [
    "Is this codebase ready for Python 3.13?",
    "Is this code review checklist too long for small PRs?",
    "Should we adopt this design system for the admin pages?",
    "In this document-heavy org, should we move to Notion?",
    "Should the session be attached to the user or the device?",
    # The question carries the artifact itself.
    "We plan to move sessions from Redis to Postgres with dual writes for two weeks, "
    "then switch reads. Is this plan safe?",
    "Is the following design safe?\n\n```\ncache -> redis -> postgres\n```",
]


@pytest.mark.parametrize("question", list(REFERENCES))
def test_a_reference_to_nothing_attached_stops(question: str) -> None:
    found = question_problems(question, attached=False)

    assert [p.found for p in found] == [REFERENCES[question]]
    with pytest.raises(UsageError) as stopped:
        preflight(question, attached=False)
    message = str(stopped.value)
    assert f"it refers to {REFERENCES[question]!r} but nothing is attached" in message
    assert "--attach FILE" in message
    assert "--yes" in message


@pytest.mark.parametrize("question", list(REFERENCES))
def test_a_reference_passes_when_the_artifact_is_attached(question: str) -> None:
    assert question_problems(question, attached=True) == []


@pytest.mark.parametrize("question", GROUNDED_WITHOUT_ATTACHMENT)
def test_a_question_that_holds_its_subject_passes(question: str) -> None:
    assert question_problems(question, attached=False) == []


def test_every_problem_is_listed_at_once() -> None:
    with pytest.raises(UsageError) as stopped:
        preflight("Review this code: <paste code here>", attached=False)
    message = str(stopped.value)
    assert "'<paste code here>'" in message
    assert "'this code'" in message


def test_an_existing_debate_is_told_to_start_again() -> None:
    with pytest.raises(UsageError) as stopped:
        preflight("Is this design safe?", attached=False, debate_id="council_AbC12345")
    assert "council_AbC12345 was created with this question" in str(stopped.value)
