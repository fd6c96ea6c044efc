"""A streamed Messages API answer, event by event, gathered into the message it stands for.

`message_start` names the model and the input tokens (cache tokens apart);
`content_block_start` opens a text or `tool_use` block, whose `content_block_delta`s
add `text_delta`s or `input_json_delta` fragments (the call's input as JSON, to
concatenate); `message_delta` brings the final output tokens; `message_stop` ends a
whole answer. The gathered message has the shape of a plain response, so
`read_message` reads both alike.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from dreamcontext_council.engine.providers.answer_read import TextParts
from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, no_text, stream_cut


class MessageStream:
    """The events of one streamed message so far."""

    def __init__(self) -> None:
        self._blocks: dict[int, dict[str, Any]] = {}
        self._inputs: dict[int, TextParts] = {}  # a tool call's input, in fragments
        self._texts: dict[int, TextParts] = {}  # a text block's deltas, joined at the end
        self._usage: dict[str, Any] = {}
        self._model: Any = None
        self._stopped = False
        self.held = 0  # characters kept: text, tool input, blocks and usage as sent

    @property
    def ended(self) -> bool:
        """Whether `message_stop` came."""
        return self._stopped

    def add(self, event: Any) -> str | None:
        """Take one event; return the answer text it adds ("" when none, None for a ping)."""
        if not isinstance(event, dict):
            raise AttemptFailed(no_text("malformed stream event"))
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            index = event.get("index")
            block = self._blocks.get(index) if isinstance(index, int) else None
            if block is None or not isinstance(index, int) or not isinstance(delta, dict):
                return ""
            if delta.get("type") == "text_delta" and block.get("type") == "text":
                text = str(delta.get("text") or "")
                self._texts.setdefault(index, TextParts()).add(text)
                self.held += len(text)
                return text
            if delta.get("type") == "input_json_delta" and block.get("type") == "tool_use":
                fragment = str(delta.get("partial_json") or "")
                self._inputs.setdefault(index, TextParts()).add(fragment)
                self.held += len(fragment)
            return ""
        if kind == "content_block_start":
            block = event.get("content_block")
            index = event.get("index")
            if isinstance(block, dict) and isinstance(index, int):
                self._blocks[index] = dict(block)
                self.held += _size(block)
                if block.get("type") == "text" and block.get("text"):
                    return str(block["text"])
        elif kind == "message_start":
            message = event.get("message") or {}
            self._model = message.get("model")
            self._take_usage(message.get("usage"))
        elif kind == "message_delta":
            self._take_usage(event.get("usage"))
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "ping":
            return None
        return ""

    def _take_usage(self, usage: Any) -> None:
        if isinstance(usage, dict):
            self._usage.update((k, v) for k, v in usage.items() if v is not None)
            self.held += _size(usage)

    def message(self) -> dict[str, Any]:
        """The whole message as a plain response body; AttemptFailed when the stream ended
        before `message_stop` (it was cut off)."""
        if not self._stopped:
            raise AttemptFailed(stream_cut("no message_stop"))
        content = []
        for index, opened in sorted(self._blocks.items()):
            block = dict(opened)
            if index in self._texts:
                block["text"] = block.get("text", "") + self._texts[index].text()
            parts = self._inputs.get(index)
            text = parts.text() if parts else ""
            if text:
                try:
                    block["input"] = json.loads(text)
                except ValueError:  # not JSON: `read_message` reports the call's input
                    block["input"] = text
            content.append(block)
        return {"content": content, "usage": self._usage, "model": self._model}

    def cut_message(self) -> dict[str, Any]:
        """The message as far as it came, when reading stopped at the answer's budget: its
        text blocks only (a tool call cut short has no input to run)."""
        content = []
        for index, opened in sorted(self._blocks.items()):
            if opened.get("type") == "text":
                parts = self._texts.get(index)
                text = str(opened.get("text") or "") + (parts.text() if parts else "")
                content.append({"type": "text", "text": text})
        return {"content": content, "usage": self._usage, "model": self._model}


def _size(value: Any) -> int:
    """The length of `value` as JSON, what keeping it costs about."""
    try:
        return len(orjson.dumps(value))
    except TypeError:  # not JSON after all: count it as large
        return 1 << 20
