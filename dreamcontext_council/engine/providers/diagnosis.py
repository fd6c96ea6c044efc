"""Why a call failed, whether trying again may help, and what to tell the user.

A provider turns what went wrong in one attempt into a `Failure` (`classify` for the
SDKs' errors and HTTP statuses, the helpers below for programs and empty answers);
`retry.request_with_retries` decides from it whether to try again. Every piece of
server or program output that reaches a message goes through `redact` first, so API
keys never show up in errors or logs.
"""

from __future__ import annotations

import email.utils
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from dreamcontext_council.views.failures import shorten_at_word
from dreamcontext_council.views.terminal import printable

REDACTED = "[redacted]"
SERVER_MESSAGE_LIMIT = 300
# How much of a server error's body a retried failure's reason carries (its first line).
SERVER_LINE_LIMIT = 120
STDERR_TAIL_LIMIT = 600
# The reason of an attempt whose connection failed before, or while, the server answered.
CONNECTION_FAILED = "connection failed or dropped"

# Key-shaped strings are hidden even when nobody told us they are secrets.
_SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"(?i)\b(x-api-key|api[_-]?key|authorization)(\"?\s*[:=]\s*\"?)[^\s\"',}]{8,}"),
    re.compile(r"://[^/\s:@]+:[^/\s@]+@"),
)
_SECRET_ENV_NAME = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD)")

_STATUS_REASONS = {
    408: "request timeout",
    409: "conflict",
    429: "rate limited",
    500: "server error",
    502: "bad gateway",
    503: "unavailable",
    504: "gateway timeout",
    529: "overloaded",
}


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Return `text` with every secret, and anything shaped like an API key, hidden."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    text = _SECRET_PATTERNS[0].sub(REDACTED, text)
    text = _SECRET_PATTERNS[1].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _SECRET_PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
    return _SECRET_PATTERNS[3].sub(f"://{REDACTED}@", text)


def secrets_from_env(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of environment variables whose names say they hold keys, tokens or passwords."""
    return tuple(
        value for name, value in env.items() if _SECRET_ENV_NAME.search(name) and len(value) >= 8
    )


def shorten(text: str, limit: int = SERVER_MESSAGE_LIMIT) -> str:
    """Collapse whitespace and cut `text` to `limit` characters, at a word boundary."""
    return shorten_at_word(text, limit)


def tail(text: str, limit: int = STDERR_TAIL_LIMIT) -> str:
    """The last `limit` characters of `text`, stripped, marked when cut."""
    text = text.strip()
    return text if len(text) <= limit else "…" + text[-limit:]


# -- what went wrong -------------------------------------------------------------------


@dataclass(frozen=True)
class CallTarget:
    """Who is being called, for messages: provider, model and the settings behind them.

    `base_url_from` names the setting the server URL came from (`--base-url`, or the
    environment variable), so a message points at the one the user actually set.
    """

    provider: str
    model: str
    key_env: str | None = None
    base_url_env: str | None = None
    base_url: str | None = None
    secrets: tuple[str, ...] = ()
    base_url_from: str | None = None


@dataclass(frozen=True)
class Failure:
    """One failed attempt, classified.

    `reason` is short ("429 rate limited", "timed out after 30s"); `message` is the
    full user-facing text for failures that are not retried. `no_text` failures
    (empty or malformed answers) have their own, smaller retry budget. `advice` is the
    sentence that ends the message when the retries run out (which setting to change).
    """

    retryable: bool
    reason: str
    message: str = ""
    status: int | None = None
    retry_after_s: float | None = None
    no_text: bool = False
    advice: str = ""


class AttemptFailed(Exception):
    """Raised by a provider's single attempt when it already knows what went wrong."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


@dataclass(frozen=True)
class SdkErrors:
    """The exception classes of one SDK, so `classify` can tell them apart.

    The `anthropic` and `openai` SDKs share this hierarchy; each provider passes its
    own classes so this module never imports an SDK.
    """

    status: type[BaseException]
    timeout: type[BaseException]
    connection: type[BaseException]
    validation: type[BaseException]
    credentials: tuple[type[BaseException], ...] = ()
    # What a stream's body can raise as it is read: the HTTP stack's own timeouts and
    # broken connections, which the SDKs wrap in their classes only for whole bodies.
    transport_timeout: tuple[type[BaseException], ...] = ()
    transport: tuple[type[BaseException], ...] = ()


def no_text(detail: str) -> Failure:
    """An answer without usable text (empty, or a body that does not parse)."""
    return Failure(retryable=True, reason=detail, no_text=True)


def missing_key(target: CallTarget) -> Failure:
    """No API key could be found for the provider."""
    return Failure(
        retryable=False,
        reason="no API key",
        message=(
            f"{target.provider} has no API key. Set {target.key_env}, "
            "or use the scripted model to run offline."
        ),
    )


def command_failed(target: CallTarget, returncode: int, stderr: str) -> Failure:
    """A command provider program that exited with an error."""
    detail = printable(redact(tail(stderr), target.secrets))
    message = f"command {target.model!r} failed with exit code {returncode}"
    message += f": {detail}" if detail else " and printed nothing on stderr."
    return Failure(retryable=False, reason=f"exit code {returncode}", message=message)


def command_not_runnable(target: CallTarget, problem: str) -> Failure:
    """A command provider program that could not be started at all."""
    return Failure(
        retryable=False,
        reason=problem,
        message=(
            f"command {target.model!r} could not start ({problem}). "
            "Check the command line after `command:` in the model."
        ),
    )


def timed_out(seconds: float | None) -> Failure:
    """An attempt that ran past the per-call timeout."""
    reason = "timed out" if seconds is None else f"timed out after {seconds:g}s"
    return Failure(
        retryable=True,
        reason=reason,
        advice="If the model needs longer, raise --timeout (seconds per call).",
    )


def stream_cut(detail: str) -> Failure:
    """A streamed answer that broke off before its end; its partial text is dropped."""
    return Failure(
        retryable=True, reason=f"stream cut off ({detail})" if detail else "stream cut off"
    )


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from `retry-after-ms` or `Retry-After`.

    `Retry-After` may be a number of seconds or an HTTP date. Returns None when
    neither header is present or parses.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


def server_message(body: object) -> str:
    """The human-readable part of an error body from either API (or a proxy)."""
    if isinstance(body, Mapping):
        error = body.get("error")
        if isinstance(error, Mapping) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        for key in ("message", "detail"):
            if body.get(key):
                return str(body[key])
        return json.dumps(body)[:SERVER_MESSAGE_LIMIT]
    if isinstance(body, bytes):
        return body.decode("utf-8", "replace")
    return "" if body is None else str(body)


def status_failure(
    target: CallTarget, status: int, body: object, headers: Mapping[str, str]
) -> Failure:
    """Classify an HTTP error status from the provider's server."""
    said = printable(redact(shorten(server_message(body)), target.secrets))
    if status in (408, 409, 429) or status >= 500:
        reason = f"{status} {_STATUS_REASONS.get(status, 'server error')}"
        if status >= 500 and (first := _first_line(server_message(body), target)):
            reason += f": {first}"
        return Failure(
            retryable=True,
            reason=reason,
            status=status,
            retry_after_s=parse_retry_after(headers),
        )
    who, model = target.provider, target.model
    suffix = f": {said}" if said else ""
    where = f" (server {target.base_url})" if target.base_url else ""
    key_hint = f" Set {target.key_env} to a valid key." if target.key_env else ""
    if status == 401:
        message = f"{who} rejected the API key (401){where}.{key_hint}"
    elif status == 403:
        message = f"{who} denied access to model {model} (403){suffix}."
        if target.key_env:
            message += f" Check that the key in {target.key_env} may use this model."
    elif status == 404:
        message = f"{who} does not know model {model} (404){suffix}. Check the model name"
        setting = target.base_url_from or target.base_url_env
        if setting:
            message += f" and {setting}"
        message += "."
    elif status == 402:
        message = f"{who} requires payment (402){suffix}."
        if target.key_env:
            message += f" Check the billing of the account behind {target.key_env}."
    else:
        message = f"{who} refused the request for model {model} ({status}){suffix}"
    return Failure(retryable=False, reason=f"{status}", message=message, status=status)


def _first_line(text: str, target: CallTarget) -> str:
    """The first non-blank line of a server's error text: secrets hidden, control characters
    shown, cut at a word to `SERVER_LINE_LIMIT`, without a closing full stop."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    return printable(redact(shorten(line, SERVER_LINE_LIMIT), target.secrets)).rstrip(".")


def _failed_connection_behind(exc: BaseException) -> bool:
    """Whether what the SDK calls a timeout was a connection that failed outright: the SDKs'
    aiohttp client reports a refused connection as a connect timeout, with the refusal (an
    OSError that is no timeout) among its causes."""
    cause = exc.__cause__ or exc.__context__
    for _ in range(8):  # the SDK's error, the HTTP stack's, the socket's
        if cause is None:
            return False
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def classify(
    exc: BaseException,
    target: CallTarget,
    errors: SdkErrors | None,
    timeout_s: float | None = None,
) -> Failure | None:
    """Decide what a failed attempt means; None for exceptions that are bugs, not failures."""
    if isinstance(exc, AttemptFailed):
        return exc.failure
    if isinstance(exc, TimeoutError):
        return timed_out(timeout_s)
    if isinstance(exc, json.JSONDecodeError | UnicodeDecodeError):  # the SDK's own json()
        return no_text("malformed response body")
    if errors is None:
        return None
    if isinstance(exc, errors.timeout) and not _failed_connection_behind(exc):
        return timed_out(timeout_s)
    if isinstance(exc, errors.transport_timeout):
        return timed_out(timeout_s)
    if isinstance(exc, (errors.connection, *errors.transport)):
        return Failure(retryable=True, reason=CONNECTION_FAILED)
    if isinstance(exc, errors.validation):
        return no_text("response did not match the API schema")
    if isinstance(exc, errors.status):
        status = int(getattr(exc, "status_code", 0) or 0)
        response = getattr(exc, "response", None)
        headers = dict(getattr(response, "headers", None) or {})
        return status_failure(target, status, getattr(exc, "body", None), headers)
    if isinstance(exc, errors.credentials) or (
        isinstance(exc, TypeError) and "authentication" in str(exc).lower()
    ):
        return missing_key(target)
    return None
