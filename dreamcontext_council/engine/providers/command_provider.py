"""Any program that reads a prompt on stdin and prints the answer (`claude -p`, `llm`, ...)."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shlex
import signal
from collections.abc import Mapping
from dataclasses import replace

from dreamcontext_council.engine.providers.base import (
    Completion,
    Prompt,
    Reply,
    TextListener,
    tools_refused,
)
from dreamcontext_council.engine.providers.diagnosis import (
    AttemptFailed,
    CallTarget,
    command_failed,
    command_not_runnable,
    secrets_from_env,
)
from dreamcontext_council.engine.providers.limits import CallLimits
from dreamcontext_council.engine.providers.retry import RetryPolicy, complete_with_retries

# How much of the program's stdout one read takes; a read returns what is there sooner.
READ_SIZE = 65536


def estimate_tokens(text: str) -> int:
    """A rough token count for programs that report none: one token per four characters."""
    return (len(text) + 3) // 4


def prompt_input(prompt: Prompt) -> str:
    """What the program reads on stdin: the system prompt, a blank line, the user message."""
    return f"{prompt.system}\n\n{prompt.user}" if prompt.system else prompt.user


def split_command(target: CallTarget) -> list[str]:
    """The argument list of the command line in `target.model`, split like a shell would."""
    try:
        argv = shlex.split(target.model)
    except ValueError as exc:
        raise AttemptFailed(command_not_runnable(target, f"unbalanced quoting: {exc}")) from None
    if not argv:
        raise AttemptFailed(command_not_runnable(target, "empty command line"))
    return argv


class CommandProvider:
    """Runs the model's command line (shell-style split, no shell) once per call.

    The prompt goes to stdin and stdout is the answer, read as it comes: each piece
    goes to the prompt's `on_text` (trailing whitespace held back until more text
    follows, so the pieces join to the answer). A non-zero exit fails at once with
    the tail of stderr; a run longer than `timeout_s` in all is killed (with any
    children it started) and retried like any timeout. A program cannot call tools:
    a prompt with tools is refused before anything runs.
    """

    name = "command"
    supports_tools = False

    def __init__(
        self,
        timeout_s: float = 120.0,
        max_retries: int = 4,
        *,
        limits: CallLimits | None = None,
        retry: RetryPolicy | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.policy = replace(retry or RetryPolicy(), max_retries=max_retries)
        self.limits = limits or CallLimits()
        self.env = None if env is None else dict(env)
        self.cwd = cwd
        self._secrets = secrets_from_env(env or {}) + secrets_from_env(os.environ)

    def __repr__(self) -> str:
        return "CommandProvider()"

    async def complete(self, prompt: Prompt, model: str) -> Completion:
        """Run the command line `model` with `prompt` on stdin and return its output."""
        if prompt.tools is not None:
            raise tools_refused(self.name)
        target = CallTarget(provider=self.name, model=model, secrets=self._secrets)
        stdin = prompt_input(prompt)

        async def attempt() -> Reply:
            text = await self._run(split_command(target), stdin, target, prompt.on_text)
            return Reply(
                text=text,
                input_tokens=estimate_tokens(stdin),
                output_tokens=estimate_tokens(text),
                model=model,
            )

        return await complete_with_retries(
            attempt,
            target=target,
            policy=self.policy,
            limits=self.limits,
            timeout_s=self.timeout_s,
            on_retry=prompt.on_retry,
        )

    async def _run(
        self, argv: list[str], stdin: str, target: CallTarget, on_text: TextListener | None
    ) -> str:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise AttemptFailed(command_not_runnable(target, f"{argv[0]}: not found")) from None
        except PermissionError:
            raise AttemptFailed(
                command_not_runnable(target, f"{argv[0]}: permission denied")
            ) from None
        try:
            text, err = await _exchange(process, stdin.encode("utf-8"), StdoutText(on_text))
        except BaseException:
            # Timeout or cancellation: do not leave the program (or its children) running.
            await _kill(process)
            raise
        if process.returncode != 0:
            raise AttemptFailed(
                command_failed(target, process.returncode or 0, err.decode("utf-8", "replace"))
            )
        return text


class StdoutText:
    """A program's stdout decoded as it comes, each new piece told to `on_text`.

    Trailing whitespace waits until text follows it, so the pieces told join to the
    answer: the whole output, decoded as UTF-8 (bad bytes replaced), `.rstrip()`ed.
    """

    def __init__(self, on_text: TextListener | None) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._held = ""
        self._on_text = on_text

    def add(self, data: bytes, *, final: bool = False) -> None:
        """Take the next bytes of stdout (`final` at its end)."""
        text = self._decoder.decode(data, final)
        if not text:
            return
        self._parts.append(text)
        if self._on_text is not None:
            text = self._held + text
            shown = text.rstrip()
            self._held = text[len(shown) :]
            if shown:
                self._on_text(shown)

    def answer(self) -> str:
        """The whole output so far, without trailing whitespace."""
        return "".join(self._parts).rstrip()


async def _exchange(
    process: asyncio.subprocess.Process, data: bytes, stdout: StdoutText
) -> tuple[str, bytes]:
    """Write `data` to stdin, read stdout into `stdout` as it comes and stderr whole, and
    wait for the exit: the answer and stderr."""
    assert process.stdin and process.stdout and process.stderr  # all three are pipes

    async def feed(stdin: asyncio.StreamWriter) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it stopped reading
            stdin.write(data)
            await stdin.drain()
        stdin.close()

    feeding = asyncio.ensure_future(feed(process.stdin))
    errors = asyncio.ensure_future(process.stderr.read())
    try:
        while chunk := await process.stdout.read(READ_SIZE):
            stdout.add(chunk)
        stdout.add(b"", final=True)
        await feeding
        err = await errors
        await process.wait()
    finally:
        for task in (feeding, errors):
            task.cancel()
    return stdout.answer(), err


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if hasattr(os, "killpg"):
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    with contextlib.suppress(Exception):
        await asyncio.shield(process.wait())
