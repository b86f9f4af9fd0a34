"""The SDK's errors: an API error answer, and a server out of reach."""

from __future__ import annotations

import email.utils
import time
from typing import Any, Optional


class DuctorError(Exception):
    """Every error the SDK raises for a call."""


class TransportError(DuctorError):
    """The server could not be reached, or its answer was unreadable."""


class APIError(DuctorError):
    """An error answer of the API: its HTTP status and the body's code,
    message and details."""

    def __init__(self, status: int, code: str, message: str, details: Any = None,
                 retry_after: Optional[float] = None) -> None:
        super().__init__(f"ductor: {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        #: seconds the server asked to wait (a Retry-After header), if any.
        self.retry_after = retry_after


def is_status(err: BaseException, status: int) -> bool:
    """Whether err is an APIError with the HTTP status."""
    return isinstance(err, APIError) and err.status == status


def retryable(err: BaseException) -> bool:
    """Whether a call may succeed when tried again: the server was out of
    reach, or answered 429 or a 5xx."""
    if isinstance(err, APIError):
        return err.status == 429 or err.status >= 500
    return isinstance(err, TransportError)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds to wait from a Retry-After header: a number of seconds or an
    HTTP date; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if at is None:
        return None
    return max(at.timestamp() - (time.time() if now is None else now), 0.0)
