"""A streamed chat completion, chunk by chunk, gathered into the completion it stands for.

The chunks' text deltas are the answer; `tool_calls` deltas carry each call in pieces
keyed by `index` (the id and name first, the arguments in fragments to concatenate);
usage comes in a last chunk without choices when the request asked for it
(`stream_options.include_usage`), and not at all from some compatible servers. The
gathered completion has the shape of a plain response, so `read_chat_completion`
reads both alike.
"""

from __future__ import annotations

from typing import Any

from dreamcontext_council.engine.providers.answer_read import TextParts
from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, no_text, stream_cut

# What a call kept costs besides its fragments (its dict, id and name), counted as held.
_CALL_COST = 64


class ChatStream:
    """The chunks of one streamed chat completion so far."""

    def __init__(self) -> None:
        self._texts = TextParts()
        self._calls: dict[int, dict[str, Any]] = {}
        self._usage: Any = None
        self._model: Any = None
        self._finished = False
        self.held = 0  # characters kept: text, tool-call pieces (usage is replaced, not kept)

    @property
    def ended(self) -> bool:
        """Never known from a chunk: `[DONE]` or the body's end ends a stream."""
        return False

    def add(self, chunk: Any) -> str:
        """Take one chunk; return the answer text it adds ("" when none)."""
        if not isinstance(chunk, dict):
            raise AttemptFailed(no_text("malformed stream chunk"))
        if self._model is None:
            self._model = chunk.get("model")
        usage = chunk.get("usage")
        if usage:
            self._usage = usage
        choices = chunk.get("choices")
        if not choices:
            return ""
        choice = choices[0]
        if not isinstance(choice, dict):
            raise AttemptFailed(no_text("malformed stream chunk"))
        if choice.get("finish_reason"):
            self._finished = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return ""
        calls = delta.get("tool_calls")
        if calls:
            self._add_calls(calls)
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._texts.add(content)
            self.held += len(content)
            return content
        return ""

    def _add_calls(self, calls: Any) -> None:
        for piece in calls if isinstance(calls, list) else ():
            if not isinstance(piece, dict):
                continue
            index = piece.get("index")
            key = index if isinstance(index, int) else len(self._calls)
            call = self._calls.get(key)
            if call is None:
                call = self._calls[key] = {"id": "", "name": "", "arguments": TextParts()}
                self.held += _CALL_COST
            if piece.get("id"):
                call["id"] = piece["id"]
                self.held += len(str(call["id"]))
            function = piece.get("function")
            if isinstance(function, dict):
                if function.get("name"):
                    call["name"] = function["name"]
                    self.held += len(str(call["name"]))
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    call["arguments"].add(arguments)
                    self.held += len(arguments)

    def completion(self) -> dict[str, Any]:
        """The whole completion as a plain response body; AttemptFailed when the stream
        ended before any choice finished (it was cut off)."""
        if not self._finished:
            raise AttemptFailed(stream_cut("no finish_reason"))
        message: dict[str, Any] = {"role": "assistant", "content": self._texts.text()}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"].text()},
                }
                for _, call in sorted(self._calls.items())
            ]
        return {"choices": [{"message": message}], "usage": self._usage, "model": self._model}

    def cut_completion(self) -> dict[str, Any]:
        """The completion as far as it came, when reading stopped at the answer's budget:
        its text only (a tool call cut short has no arguments to run)."""
        message = {"role": "assistant", "content": self._texts.text()}
        return {"choices": [{"message": message}], "usage": self._usage, "model": self._model}
