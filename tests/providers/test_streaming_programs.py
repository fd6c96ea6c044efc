"""Streamed answers from `command:` programs (real subprocesses) and the scripted provider."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path

import pytest

from dreamcontext_council.engine.providers.base import Prompt, ProviderCallError, RetryNotice
from dreamcontext_council.engine.providers.command_provider import CommandProvider, StdoutText
from dreamcontext_council.engine.providers.retry import RetryPolicy
from dreamcontext_council.engine.providers.scripted import ScriptedProvider, paragraphs

# Prints a line, then waits until the listener has heard it (the file it makes appears),
# then prints the rest: the run can only end if its first line was streamed before it did.
WAITS_TO_BE_HEARD = """
import os, sys, time
sys.stdin.read()
print("First, the table has forty-two rows.", flush=True)
for _ in range(400):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.025)
else:
    sys.exit(3)
print("Second, nobody counted them twice.", flush=True)
print("", flush=True)
"""


def python_command(script: str, *args: str) -> str:
    return shlex.join([sys.executable, "-c", script, *args])


@pytest.fixture
def provider(fast_retry: RetryPolicy) -> CommandProvider:
    return CommandProvider(timeout_s=20.0, retry=fast_retry, env=dict(os.environ))


def test_a_program_that_prints_slowly_is_heard_before_it_exits(
    provider: CommandProvider, tmp_path: Path
) -> None:
    heard_flag = tmp_path / "heard"
    pieces: list[str] = []

    def on_text(piece: str) -> None:
        pieces.append(piece)
        heard_flag.touch()

    prompt = Prompt(system="", user="How big is the table?", on_text=on_text)
    completion = asyncio.run(
        provider.complete(prompt, python_command(WAITS_TO_BE_HEARD, str(heard_flag)))
    )

    assert completion.text == (
        "First, the table has forty-two rows.\nSecond, nobody counted them twice."
    )
    assert len(pieces) >= 2
    assert pieces[0] == "First, the table has forty-two rows."
    assert "".join(pieces) == completion.text


def test_a_program_that_fails_after_printing_still_fails_with_its_exit_code(
    provider: CommandProvider,
) -> None:
    script = "import sys; print('half an answer', flush=True); sys.exit(4)"
    pieces: list[str] = []

    with pytest.raises(ProviderCallError) as caught:
        asyncio.run(
            provider.complete(Prompt("", "q", on_text=pieces.append), python_command(script))
        )

    assert "exit code 4" in str(caught.value)
    assert caught.value.attempts == 1


def test_a_slow_program_is_killed_at_the_whole_run_timeout_and_retried(
    fast_retry: RetryPolicy, tmp_path: Path
) -> None:
    # Keeps printing, never finishes on its first run: streaming does not stretch the timeout.
    marker = tmp_path / "ran-once"
    script = (
        "import os, sys, time\n"
        "if not os.path.exists(sys.argv[1]):\n"
        "    open(sys.argv[1], 'w').close()\n"
        "    while True:\n"
        "        print('still going', flush=True); time.sleep(0.05)\n"
        "print('done at last')\n"
    )
    provider = CommandProvider(timeout_s=1.0, retry=fast_retry)
    heard: list[str | RetryNotice] = []
    prompt = Prompt("", "q", on_text=heard.append, on_retry=heard.append)

    completion = asyncio.run(provider.complete(prompt, python_command(script, str(marker))))

    assert completion.text == "done at last"
    assert completion.attempts == 2
    [notice] = [h for h in heard if isinstance(h, RetryNotice)]
    assert notice.reason == "timed out after 1s"
    assert heard[heard.index(notice) + 1 :] == ["done at last"]


def test_utf8_split_between_reads_and_bad_bytes_read_as_a_whole_decode_does() -> None:
    pieces: list[str] = []
    stdout = StdoutText(pieces.append)
    data = "café — naïve\n\n".encode() + b"\xff end  \n"
    for index in range(len(data)):  # one byte per read: every character split
        stdout.add(data[index : index + 1])
    stdout.add(b"", final=True)

    assert stdout.answer() == data.decode("utf-8", "replace").rstrip()
    assert "".join(pieces) == stdout.answer()


def test_without_a_listener_the_answer_is_the_same() -> None:
    stdout = StdoutText(None)
    stdout.add(b"one\n")
    stdout.add(b"two \n\n", final=True)

    assert stdout.answer() == "one\ntwo"


def test_the_scripted_provider_tells_its_answer_paragraph_by_paragraph() -> None:
    pieces: list[str] = []
    task = {"phase": "opening", "persona": "skeptic", "personas": ["skeptic", "operator"]}
    prompt = Prompt(system="", user="q", task=task, on_text=pieces.append)

    completion = asyncio.run(ScriptedProvider(delay_s=0).complete(prompt, "scripted"))

    assert len(pieces) > 3
    assert "".join(pieces) == completion.text
    assert pieces == paragraphs(completion.text)
    assert all(not piece.startswith("\n") for piece in pieces)
