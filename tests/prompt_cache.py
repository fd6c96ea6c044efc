"""A provider's prompt cache by its published rules, for the stub server and the benchmark.

`PromptCache("anthropic")` follows Anthropic's rules: only prefixes that end at a block
marked `cache_control` (at most 4 a request) are cached, in the order tools, system,
messages; a prefix shorter than 1,024 tokens is not cached; a request reads the longest
of its marked prefixes already cached, writes the part up to its last marked prefix that
was not, and pays the input price for the rest. `PromptCache("openai")` follows OpenAI's:
every prompt is cached automatically, and a request reads the longest prefix it shares
with an earlier one, counted from 1,024 tokens in steps of 128; nothing is billed for
writing.

A prefix is readable once the call that wrote it has begun answering (`commit`), so
calls started together cannot read each other's. Tokens are counted as characters / 4,
as the stub counts them everywhere.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MIN_TOKENS = 1_024
OPENAI_STEP = 128
MAX_BREAKPOINTS = 4
CHARS_PER_TOKEN = 4


def tokens(characters: int) -> int:
    return characters // CHARS_PER_TOKEN


@dataclass(frozen=True)
class Bill:
    """One request's input tokens: at the input price, written to the cache, read from it,
    with the prefixes it makes readable once it answers."""

    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    writes: tuple[str, ...] = ()
    breakpoints: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_write_tokens + self.cache_read_tokens


def _blocks(content: Any) -> list[tuple[str, bool]]:
    """Text blocks (as their API shows them) and whether each carries `cache_control`."""
    if isinstance(content, str):
        return [(content, False)]
    found = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, Mapping):
            marked = isinstance(block.get("cache_control"), Mapping)
            text = block.get("text")
            shown = text if isinstance(text, str) else json.dumps(block, sort_keys=True)
            found.append((shown, marked))
    return found


def anthropic_segments(request: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """The request as the cache sees it, in order: tools, system blocks, message blocks."""
    segments: list[tuple[str, bool]] = []
    for tool in request.get("tools") or []:
        marked = isinstance(tool, Mapping) and isinstance(tool.get("cache_control"), Mapping)
        segments.append((json.dumps(tool, sort_keys=True), marked))
    segments += _blocks(request.get("system") or "")
    for message in request.get("messages") or []:
        if isinstance(message, Mapping):
            role = str(message.get("role"))
            segments += [
                (f"{role}:{text}", marked) for text, marked in _blocks(message.get("content"))
            ]
    return segments


def openai_text(request: Mapping[str, Any]) -> str:
    """The request's messages as one string, in order (the prefix OpenAI compares)."""
    parts = []
    for message in request.get("messages") or []:
        if isinstance(message, Mapping):
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
            parts.append(f"<{message.get('role')}>{text}")
    return "".join(parts)


@dataclass
class PromptCache:
    """The cache of one provider; thread-safe (the stub answers in threads)."""

    rules: str
    _cached: set[str] = field(default_factory=set)
    _prompts: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.rules not in ("anthropic", "openai"):
            raise ValueError(f"rules must be anthropic or openai, not {self.rules!r}")

    def bill(self, request: Mapping[str, Any]) -> Bill:
        """What `request` pays, from what is readable now."""
        with self._lock:
            if self.rules == "anthropic":
                return self._anthropic(request)
            return self._openai(request)

    def commit(self, bill: Bill) -> None:
        """The call began answering: what it wrote is readable from now on."""
        with self._lock:
            if self.rules == "anthropic":
                self._cached.update(bill.writes)
            else:
                self._prompts.extend(bill.writes)

    def _anthropic(self, request: Mapping[str, Any]) -> Bill:
        segments = anthropic_segments(request)
        total = tokens(sum(len(text) for text, _ in segments))
        prefixes: list[str] = []
        joined = ""
        for text, marked in segments:
            joined += text
            if marked:
                prefixes.append(joined)
        cacheable = [p for p in prefixes if tokens(len(p)) >= MIN_TOKENS]
        read = max((tokens(len(p)) for p in cacheable if p in self._cached), default=0)
        last = tokens(len(cacheable[-1])) if cacheable else 0
        written = max(0, last - read)
        writes = tuple(p for p in cacheable if p not in self._cached)
        return Bill(total - read - written, written, read, writes, len(prefixes))

    def _openai(self, request: Mapping[str, Any]) -> Bill:
        text = openai_text(request)
        total = tokens(len(text))
        shared = max((_common_prefix(text, seen) for seen in self._prompts), default=0)
        shared_tokens = tokens(shared)
        read = 0
        if shared_tokens >= MIN_TOKENS:
            read = MIN_TOKENS + (shared_tokens - MIN_TOKENS) // OPENAI_STEP * OPENAI_STEP
        return Bill(total - read, 0, read, (text,) if total >= MIN_TOKENS else ())


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    limit = min(len(a), len(b))
    low, high = 0, limit
    while low < high:  # a binary search over slices compares in C, not per character
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def usage_fields(api: str, bill: Bill) -> dict[str, Any]:
    """The usage members of a reply that `bill` describes, in the shape of `api`."""
    if api == "openai":
        return {
            "prompt_tokens": bill.total,
            "prompt_tokens_details": {"cached_tokens": bill.cache_read_tokens},
        }
    return {
        "input_tokens": bill.input_tokens,
        "cache_creation_input_tokens": bill.cache_write_tokens,
        "cache_read_input_tokens": bill.cache_read_tokens,
    }
