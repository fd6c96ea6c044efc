"""The command provider, running real programs with the prompt on stdin."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from dreamcontext_council.engine.providers.base import Completion, Prompt, ProviderCallError
from dreamcontext_council.engine.providers.command_provider import CommandProvider
from dreamcontext_council.engine.providers.retry import RetryPolicy

from .conftest import TEST_KEY, SleepRecorder

PROMPT = Prompt(system="You are the Epistemologist.", user="What do we actually know?")


def python_command(script: str, *args: str) -> str:
    """A command line running `script` with this interpreter."""
    return shlex.join([sys.executable, "-c", script, *args])


def run(command: str, provider: CommandProvider, prompt: Prompt = PROMPT) -> Completion:
    return asyncio.run(provider.complete(prompt, command))


@pytest.fixture
def provider(fast_retry: RetryPolicy) -> CommandProvider:
    return CommandProvider(
        timeout_s=5.0, retry=fast_retry, env={**os.environ, "CI_TOKEN": TEST_KEY}
    )


def test_the_prompt_goes_to_stdin_and_stdout_is_the_answer(provider: CommandProvider) -> None:
    command = python_command("import sys; data = sys.stdin.read(); print('Known: ' + repr(data))")

    completion = run(command, provider)

    stdin = "You are the Epistemologist.\n\nWhat do we actually know?"
    assert completion.text == "Known: " + repr(stdin)
    assert completion.provider == "command"
    assert completion.model == command
    assert completion.attempts == 1
    assert completion.usage.input_tokens == (len(stdin) + 3) // 4
    assert completion.usage.output_tokens == (len(completion.text) + 3) // 4
    assert completion.usage.latency_s > 0


def test_without_a_system_prompt_stdin_is_the_user_message(provider: CommandProvider) -> None:
    command = python_command("import sys; print(sys.stdin.read())")

    completion = run(command, provider, Prompt(system="", user="Just this."))

    assert completion.text == "Just this."


def test_quoted_arguments_reach_the_program_intact(provider: CommandProvider) -> None:
    command = python_command("import sys; print(sys.argv[1:])", "two words", "it's")

    assert run(command, provider).text == str(["two words", "it's"])


def test_a_failing_command_fails_at_once_with_its_stderr_tail_redacted(
    provider: CommandProvider, tmp_path: Path, sleeps: SleepRecorder
) -> None:
    runs = tmp_path / "runs"
    command = python_command(
        "import os, sys\n"
        "open(sys.argv[1], 'a').write('x')\n"
        "sys.stderr.write('noise\\n' * 500)\n"
        "sys.stderr.write('error: token ' + os.environ['CI_TOKEN'] + ' was refused')\n"
        "sys.exit(3)",
        str(runs),
    )

    with pytest.raises(ProviderCallError) as caught:
        run(command, provider)

    message = str(caught.value)
    assert message.startswith(f"command {command!r} failed with exit code 3: …")
    assert message.endswith("error: token [redacted] was refused")
    assert TEST_KEY not in message
    assert len(message) < len(command) + 700
    assert runs.read_text() == "x"
    assert sleeps.waits == []
    assert not caught.value.retryable


def test_a_silent_failure_says_so(provider: CommandProvider) -> None:
    with pytest.raises(ProviderCallError, match="exit code 1 and printed nothing on stderr"):
        run(python_command("raise SystemExit(1)"), provider)


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (
            "no-such-program-for-council-tests --flag",
            "no-such-program-for-council-tests: not found",
        ),
        ("say 'unbalanced", "unbalanced quoting"),
        ("   ", "empty command line"),
    ],
)
def test_a_command_that_cannot_start_is_reported(
    provider: CommandProvider, command: str, problem: str
) -> None:
    with pytest.raises(ProviderCallError) as caught:
        run(command, provider)

    assert f"could not start ({problem}" in str(caught.value)
    assert "Check the command line after `command:` in the model." in str(caught.value)


def test_a_timeout_kills_the_program_and_its_children(
    tmp_path: Path, fast_retry: RetryPolicy
) -> None:
    pids = tmp_path / "pids"
    command = shlex.join(
        ["sh", "-c", f'sleep 30 & echo $! >> {shlex.quote(str(pids))}; echo $$ >> "{pids}"; wait']
    )
    provider = CommandProvider(timeout_s=0.5, max_retries=1, retry=fast_retry)

    started = time.monotonic()
    with pytest.raises(ProviderCallError) as caught:
        run(command, provider)

    assert time.monotonic() - started < 10
    assert str(caught.value) == (
        "command still failing after 2 attempts (timed out after 0.5s). "
        "If the model needs longer, raise --timeout (seconds per call)."
    )
    assert caught.value.retryable
    started_pids = [int(line) for line in pids.read_text().split()]
    assert len(started_pids) == 4
    time.sleep(0.1)
    for pid in started_pids:
        assert not _alive(pid), f"process {pid} outlived its timeout"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child not yet reaped by init shows as a zombie; that is dead enough.
    status = Path(f"/proc/{pid}/stat")
    return not (status.exists() and status.read_text().split()[2] == "Z")


def test_a_timeout_is_retried(tmp_path: Path, fast_retry: RetryPolicy) -> None:
    marker = tmp_path / "tried-once"
    command = python_command(
        "import pathlib, sys, time\n"
        "marker = pathlib.Path(sys.argv[1])\n"
        "if not marker.exists():\n"
        "    marker.touch(); time.sleep(30)\n"
        "print('second time lucky')",
        str(marker),
    )
    provider = CommandProvider(timeout_s=1.0, retry=fast_retry)

    completion = run(command, provider)

    assert completion.text == "second time lucky"
    assert completion.attempts == 2


def test_empty_output_is_retried_then_reported(provider: CommandProvider) -> None:
    with pytest.raises(ProviderCallError) as caught:
        run(python_command("print('   ')"), provider)

    assert "command returned no text for model" in str(caught.value)
    assert caught.value.attempts == 3
