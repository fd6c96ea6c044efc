"""Keys an answer must never carry into the debate folder, the exports or the terminal.

A model (or a `command:` program, or a server) may echo a key it was given or found in
its environment. Every answer passes through `hide_keys` in `ProviderSet.complete`, the
one place all calls go through, before anything stores, parses or prints it; an answer
told as it streams passes through `StreamedKeyHider` on its way to the listener. Only the
exact values of known keys are hidden, so an answer that discusses API keys keeps its
prose and code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from dreamcontext_council.engine.providers.diagnosis import REDACTED

# `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `MY_PROXY_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, ...
_KEY_ENV_NAME = re.compile(r"(?i)(?:^|_)(?:API_KEY|AUTH_TOKEN)$")
# Query parameters that carry credentials in a base URL (`?api-key=…`, `&token=…`).
_KEY_PARAM = re.compile(r"(?i)(key|token|secret|password|passwd|auth|sig)")
MIN_KEY_LENGTH = 8
MIN_URL_SECRET_LENGTH = 4


def env_keys(env: Mapping[str, str]) -> list[str]:
    """The values of every `*_API_KEY` (and `*_AUTH_TOKEN`) variable in `env`."""
    return [
        value.strip()
        for name, value in env.items()
        if _KEY_ENV_NAME.search(name) and len(value.strip()) >= MIN_KEY_LENGTH
    ]


def url_credentials(url: str | None) -> list[str]:
    """Credentials written into a server URL: `user:pass@` and key-like query parameters."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = []
    if parts.password:
        found += [parts.password, f"{parts.username or ''}:{parts.password}"]
    elif parts.username and "@" in parts.netloc:
        found.append(parts.username)  # a bare token as userinfo (`https://TOKEN@host`)
    found += [value for name, value in parse_qsl(parts.query) if _KEY_PARAM.search(name)]
    return [s for s in found if len(s) >= MIN_URL_SECRET_LENGTH]


def url_without_credentials(url: str) -> tuple[str, bool]:
    """`url` with its `user:pass@` and key-like query parameters removed, and whether any were."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url, False
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address
    netloc = host + (f":{port}" if port is not None else "")
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    kept = [(k, v) for k, v in query if not _KEY_PARAM.search(k)]
    had = "@" in parts.netloc or len(kept) != len(query)
    if not had:
        return url, False
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(kept), parts.fragment)), True


def answer_keys(envs: Iterable[Mapping[str, str]], urls: Iterable[str | None]) -> tuple[str, ...]:
    """Every key an answer must not carry: env keys and base-URL credentials, longest first."""
    keys = {k for env in envs for k in env_keys(env)}
    keys |= {c for url in urls for c in url_credentials(url)}
    return tuple(sorted(keys, key=len, reverse=True))


def hide_keys(text: str, keys: Iterable[str]) -> str:
    """`text` with every occurrence of each key replaced by `[redacted]`."""
    for key in keys:
        if key in text:
            text = text.replace(key, REDACTED)
    return text


class StreamedKeyHider:
    """Hides keys in an answer told piece by piece, even a key split between two pieces.

    `text(piece)` passes on what is known to be free of keys and holds back an end that
    could be the start of one until later text settles it; `finish()` passes on what is
    held when the answer is complete, and `restart()` drops it when the attempt is
    retried. The pieces passed on join to `hide_keys` of the whole answer.
    """

    def __init__(self, listener: Callable[[str], None], keys: Iterable[str]) -> None:
        self._listener = listener
        self._keys = tuple(k for k in keys if k)
        self._held = ""

    def text(self, piece: str) -> None:
        """Take the next piece of the answer."""
        text = hide_keys(self._held + piece, self._keys)
        keep = self._key_start(text)
        self._held = text[len(text) - keep :] if keep else ""
        shown = text[: len(text) - keep]
        if shown:
            self._listener(shown)

    def _key_start(self, text: str) -> int:
        """The length of the longest end of `text` that begins some key (0 for none)."""
        longest = 0
        for key in self._keys:
            start = max(0, len(text) - len(key) + 1)
            while (start := text.find(key[0], start)) != -1:
                if key.startswith(text[start:]):
                    longest = max(longest, len(text) - start)
                    break
                start += 1
        return longest

    def finish(self) -> None:
        """The answer is complete: pass on what was held."""
        if self._held:
            self._listener(hide_keys(self._held, self._keys))
            self._held = ""

    def restart(self) -> None:
        """The attempt failed and is retried: what was held belongs to it."""
        self._held = ""
