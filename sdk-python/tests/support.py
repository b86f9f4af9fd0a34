"""What the tests against a real server share: its client, unique names,
and polling with a deadline."""

from __future__ import annotations

import os
import time
import unittest
import uuid
from typing import Callable, Optional, TypeVar

from ductor import Client

T = TypeVar("T")

LIVE = bool(os.environ.get("DUCTOR_API_KEY"))

#: Skips a test case unless DUCTOR_URL and DUCTOR_API_KEY name a server.
live = unittest.skipUnless(LIVE, "set DUCTOR_URL and DUCTOR_API_KEY to run against a real server")


def client() -> Client:
    return Client.from_env()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def eventually(fn: Callable[[], Optional[T]], timeout: float = 30.0, every: float = 0.05, what: str = "") -> T:
    """Calls fn until it answers something truthy, for up to timeout seconds."""
    end = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or fn}")
        time.sleep(every)
