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

from dreamcontext_council.engine.providers.answer_read import DEFAULT_MAX_ANSWER_KB, read_limit
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
# How much of the end of stderr is kept for a failure's message; the rest is read and dropped.
STDERR_KEPT = 65536


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
    children it started) and retried like any timeout. Once stdout passes the answer's
    budget (`answer_read.read_limit` of `max_answer_kb`) the program is killed the same
    way and the answer is what it printed until then (`Reply.cut`). A program cannot
    call tools: a prompt with tools is refused before anything runs.
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
        max_answer_kb: int = DEFAULT_MAX_ANSWER_KB,
    ) -> None:
        self.timeout_s = timeout_s
        self.answer_limit = read_limit(max_answer_kb)
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
            stdout = StdoutText(prompt.on_text, self.answer_limit)
            await self._run(split_command(target), stdin, target, stdout)
            text = stdout.answer()
            return Reply(
                text=text,
                input_tokens=estimate_tokens(stdin),
                output_tokens=estimate_tokens(text),
                model=model,
                cut=stdout.cut,
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
        self, argv: list[str], stdin: str, target: CallTarget, stdout: StdoutText
    ) -> None:
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
            err = await _exchange(process, stdin.encode("utf-8"), stdout)
        except BaseException:
            # Timeout or cancellation: do not leave the program (or its children) running.
            await _kill(process)
            raise
        if stdout.cut:  # it printed past the budget: stopped, and what it printed is the answer
            await _kill(process)
            return
        if process.returncode != 0:
            raise AttemptFailed(
                command_failed(target, process.returncode or 0, err.decode("utf-8", "replace"))
            )


class StdoutText:
    """A program's stdout decoded as it comes, each new piece told to `on_text`.

    Trailing whitespace waits until text follows it, so the pieces told join to the
    answer: the whole output, decoded as UTF-8 (bad bytes replaced), `.rstrip()`ed.
    Once more than `limit` bytes came, `cut` turns True and no more are taken.
    """

    def __init__(
        self, on_text: TextListener | None, limit: int = read_limit(DEFAULT_MAX_ANSWER_KB)
    ) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._parts: list[str] = []
        self._held = ""
        self._on_text = on_text
        self.limit = limit
        self.size = 0
        self.cut = False

    def add(self, data: bytes, *, final: bool = False) -> None:
        """Take the next bytes of stdout (`final` at its end)."""
        self.size += len(data)
        if self.size > self.limit:
            self.cut = True
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
        """The whole output so far, without trailing whitespace (stripped from the last
        pieces before the join, so a long answer is not copied once more)."""
        parts = list(self._parts)
        while parts and not parts[-1].rstrip():
            parts.pop()
        if parts:
            parts[-1] = parts[-1].rstrip()
        return "".join(parts)


async def _exchange(process: asyncio.subprocess.Process, data: bytes, stdout: StdoutText) -> bytes:
    """Write `data` to stdin, read stdout into `stdout` as it comes and the tail of stderr,
    and wait for the exit: stderr's tail. Returns at once, without waiting, when stdout
    passes its budget (`stdout.cut`)."""
    assert process.stdin and process.stdout and process.stderr  # all three are pipes

    async def feed(stdin: asyncio.StreamWriter) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it stopped reading
            stdin.write(data)
            await stdin.drain()
        stdin.close()

    feeding = asyncio.ensure_future(feed(process.stdin))
    errors = asyncio.ensure_future(_tail(process.stderr, STDERR_KEPT))
    try:
        while chunk := await process.stdout.read(READ_SIZE):
            stdout.add(chunk)
            if stdout.cut:
                return b""
        stdout.add(b"", final=True)
        await feeding
        err = await errors
        await process.wait()
    finally:
        for task in (feeding, errors):
            task.cancel()
    return err


async def _tail(stream: asyncio.StreamReader, kept: int) -> bytes:
    """The last `kept` bytes of `stream`, read to its end."""
    tail = bytearray()
    while chunk := await stream.read(READ_SIZE):
        tail += chunk
        if len(tail) > kept:
            del tail[: len(tail) - kept]
    return bytes(tail)


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
