"""An answer read off the wire within its size cap: a response body decoded in bounded
pieces, a plain body gathered up to a byte budget, and answer text kept without a string
per piece.

A server chooses how much it sends and how far a compressed body inflates; the reader
chooses how much it keeps. Every body is read raw and decompressed here, at most
`PIECE_BYTES` of output per step, so a gzip bomb inflates one piece at a time and stops
where the budget does. The budget of an answer is its cap (`--max-answer-kb`) plus
`ANSWER_ROOM`: an answer a little over the cap is read whole and cut as the cap says (its
sections shortened, its verdict block kept); past the budget reading stops, the connection
is closed and the answer is what was read.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

from dreamcontext_council.engine.providers.diagnosis import AttemptFailed, Failure, no_text

# The answer cap when nothing sets one, in KB of 1000 bytes (`--max-answer-kb`).
DEFAULT_MAX_ANSWER_KB = 200
# Room past the cap that is still read, for an answer the cap cuts while keeping its end.
ANSWER_ROOM = 64 * 1024
# The most one decompression step puts out, and so the most a body piece holds.
PIECE_BYTES = 64 * 1024
# The most of an error response's body that is read, as sent (compressed or not): the
# SDK reads an error body whole to say what the server said, so the body is cut before it.
ERROR_BODY_MOST = 64 * 1024
ENCODED_ERROR_BODY_MOST = 8 * 1024  # a compressed one inflates up to about 1000 times


def read_limit(max_answer_kb: int) -> int:
    """How many characters of answer (or bytes of plain body) are read before reading stops."""
    return max_answer_kb * 1000 + ANSWER_ROOM


def body_too_long(limit: int) -> Failure:
    """A plain body past the budget: its JSON cannot be read without its end."""
    return Failure(
        retryable=False,
        reason=f"response body over {limit:,} bytes",
        message=(
            f"The server sent a response body of more than {limit:,} bytes, past the answer "
            "cap; reading stopped there. Raise --max-answer-kb if the answers are meant to "
            "be that long."
        ),
    )


class _Inflater:
    """A gzip or deflate body decompressed at most `PIECE_BYTES` at a time."""

    def __init__(self, encoding: str) -> None:
        # gzip: its header; deflate: zlib-wrapped, as RFC 9110 says (raw deflate is tried next).
        self._wbits = 16 + zlib.MAX_WBITS if encoding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._raw_tried = encoding in ("gzip", "x-gzip")
        self._inflater = zlib.decompressobj(self._wbits)
        self._started = False

    def pieces(self, data: bytes) -> list[bytes]:
        out: list[bytes] = []
        pending = data
        while pending:
            try:
                piece = self._inflater.decompress(pending, PIECE_BYTES)
            except zlib.error:
                if self._started or self._raw_tried:
                    raise AttemptFailed(
                        no_text("response body not valid compressed data")
                    ) from None
                self._raw_tried = True  # some servers send raw deflate under that name
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                continue
            self._started = True
            if piece:
                out.append(piece)
            pending = self._inflater.unconsumed_tail
            if self._inflater.eof:
                break
        return out


async def body_pieces(response: Any) -> AsyncIterator[bytes]:
    """The decoded body of an httpx response, in pieces of at most `PIECE_BYTES` (a piece
    the server sent uncompressed comes as the transport read it: at most its read size).

    Identity, gzip and deflate are read; another content encoding is a malformed answer."""
    encoding = str(response.headers.get("content-encoding", "")).strip().lower()
    if encoding in ("", "identity"):
        async for data in response.aiter_raw():
            yield data
        return
    if encoding not in ("gzip", "x-gzip", "deflate"):
        raise AttemptFailed(no_text(f"response body in an unread encoding ({encoding[:40]})"))
    inflater = _Inflater(encoding)
    async for data in response.aiter_raw():
        for piece in inflater.pieces(data):
            yield piece


async def read_plain(response: Any, limit: int) -> bytearray:
    """A plain (JSON) body, decoded, as long as it stays within `limit` bytes; AttemptFailed
    (`body_too_long`) once it passes them, without reading further."""
    body = bytearray()
    async for piece in body_pieces(response):
        body += piece
        if len(body) > limit:
            raise AttemptFailed(body_too_long(limit))
    return body


def _first_bytes(stream: Any, most: int) -> Any:
    """`stream` (a response body as sent) ending after its first `most` bytes, the rest
    closed: an `httpx2.AsyncByteStream`, as the SDK's HTTP client reads one."""
    import httpx2  # the SDKs' HTTP stack, imported with them

    class FirstBytes(httpx2.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            room = most
            async for data in stream:
                yield data[:room]
                room -= len(data)
                if room <= 0:
                    break

        async def aclose(self) -> None:
            await stream.aclose()

    return FirstBytes()


async def cap_error_body(response: Any) -> None:
    """An HTTP client's response hook: an error status's body is read up to
    ERROR_BODY_MOST bytes as sent (ENCODED_ERROR_BODY_MOST when compressed), whatever the
    server sends after; an answer's body is read by the provider within its budget."""
    if response.status_code < 400:
        return
    encoded = str(response.headers.get("content-encoding", "")).strip().lower()
    most = ENCODED_ERROR_BODY_MOST if encoded not in ("", "identity") else ERROR_BODY_MOST
    response.stream = _first_bytes(response.stream, most)


class TextParts:
    """Pieces of text kept as a few strings: every `JOIN_EVERY` pieces are joined into one,
    so a long answer costs about its own size, not an object per piece."""

    JOIN_EVERY = 512

    def __init__(self) -> None:
        self._joined: list[str] = []
        self._recent: list[str] = []
        self.size = 0  # characters in all

    def add(self, piece: str) -> None:
        """Keep `piece` after the others."""
        self._recent.append(piece)
        self.size += len(piece)
        if len(self._recent) >= self.JOIN_EVERY:
            self._joined.append("".join(self._recent))
            self._recent = []

    def text(self) -> str:
        """All the pieces, joined."""
        return "".join(self._joined + self._recent)

    def __bool__(self) -> bool:
        return self.size > 0
