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

from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, no_text, stream_cut


class ChatStream:
    """The chunks of one streamed chat completion so far."""

    def __init__(self) -> None:
        self._texts: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._usage: Any = None
        self._model: Any = None
        self._finished = False

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
            self._texts.append(content)
            return content
        return ""

    def _add_calls(self, calls: Any) -> None:
        for piece in calls if isinstance(calls, list) else ():
            if not isinstance(piece, dict):
                continue
            index = piece.get("index")
            key = index if isinstance(index, int) else len(self._calls)
            call = self._calls.setdefault(key, {"id": "", "name": "", "arguments": []})
            if piece.get("id"):
                call["id"] = piece["id"]
            function = piece.get("function")
            if isinstance(function, dict):
                if function.get("name"):
                    call["name"] = function["name"]
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    call["arguments"].append(arguments)

    def completion(self) -> dict[str, Any]:
        """The whole completion as a plain response body; AttemptFailed when the stream
        ended before any choice finished (it was cut off)."""
        if not self._finished:
            raise AttemptFailed(stream_cut("no finish_reason"))
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self._texts)}
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": "".join(call["arguments"])},
                }
                for _, call in sorted(self._calls.items())
            ]
        return {"choices": [{"message": message}], "usage": self._usage, "model": self._model}
