"""Whether a provider's server takes its key, asked once before a run makes anything.

`check_key` sends one models-list request through the provider's own client (its key,
server URL and HTTP stack) and reads only the answer's status: a 401 is a refused key, a
403 one that may not be used (unless the server says only that the key lacks the scope to
list models, as OpenAI's restricted keys do), and a connection that fails outright is a
server out of reach. Anything else (a timeout, a 404 from a server without the list, a
5xx, a 429) says nothing about the key, and the run goes on to find out with its calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from dreamcontext_council.engine.providers.diagnosis import (
    CONNECTION_FAILED,
    SERVER_LINE_LIMIT,
    classify,
    redact,
    server_message,
    shorten,
)
from dreamcontext_council.engine.providers.keys import url_without_credentials
from dreamcontext_council.engine.providers.sdk_provider import SdkProvider
from dreamcontext_council.views.terminal import printable

# Seconds the one request may take; past them the check says nothing and the run goes on.
KEY_CHECK_TIMEOUT_S = 10.0
# Where each provider's calls go without a server URL.
DEFAULT_SERVERS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com"}


@dataclass(frozen=True)
class KeyProblem:
    """What the models list said: `status` 401 or 403 with the server's words, or None
    with why the server could not be reached."""

    status: int | None
    detail: str


async def check_key(
    provider: SdkProvider, timeout_s: float = KEY_CHECK_TIMEOUT_S
) -> KeyProblem | None:
    """The problem one models-list request finds with `provider`'s key or server, or None."""
    target = provider.target("")
    errors = provider.sdk_errors()
    try:
        await provider.list_models(timeout_s)
    except Exception as exc:
        failure = classify(exc, target, errors, timeout_s)
        if failure is None:
            raise  # a bug, not an answer
        said = server_message(getattr(exc, "body", None))
        if failure.status == 401 or (failure.status == 403 and "scope" not in said.lower()):
            shown = printable(redact(shorten(said, SERVER_LINE_LIMIT), target.secrets))
            return KeyProblem(failure.status, shown.rstrip("."))
        if failure.reason == CONNECTION_FAILED:
            return KeyProblem(None, _os_error(exc) or "the connection failed")
    return None


def _os_error(exc: BaseException) -> str:
    """The socket's own words behind a failed connection (`Connection refused`), if any."""
    cause: BaseException | None = exc
    for _ in range(8):  # the SDK's error, the HTTP stack's, the socket's
        if cause is None:
            return ""
        if isinstance(cause, OSError) and cause.strerror:
            return printable(cause.strerror)
        cause = cause.__cause__ or cause.__context__
    return ""


def server_of(provider: SdkProvider) -> str:
    """The server `provider` calls, as a message shows it."""
    if provider.base_url:
        return url_without_credentials(provider.base_url)[0]
    return DEFAULT_SERVERS.get(provider.name, provider.name)
