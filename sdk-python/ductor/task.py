"""One attempt of a task step as a handler receives it, its context, and
the failures a handler raises."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Optional

from .models import from_dict


@dataclass
class Task:
    """One attempt of a task step, as the server hands it out."""

    id: str = ""
    token: str = ""
    handler: str = ""
    queue: str = ""
    #: the step's evaluated input (its input_expr, or the run's input).
    input: Any = None
    attempt: int = 0
    #: the same for every automatic retry of the step ({run_id}:{node}).
    idempotency_key: str = ""
    #: by the server's database clock (RFC 3339).
    deadline: Optional[str] = None
    lease_until: Optional[str] = None
    #: what was left of the deadline and the lease when the task was
    #: claimed; the worker times both from when it received the task.
    deadline_ms: Optional[int] = None
    lease_ms: Optional[int] = None
    run_id: str = ""
    node: str = ""
    #: the attempt's place in its run's trace (W3C Trace Context).
    traceparent: str = ""
    tracestate: str = ""
    #: secrets the task declared, by name, when the server sends them.
    secrets: Optional[Mapping[str, str]] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    #: when the worker received the task, on its monotonic clock.
    received: float = field(default_factory=time.monotonic, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Task:
        return from_dict(cls, d)

    def deadline_at(self) -> Optional[float]:
        """When the deadline passes on this process's monotonic clock."""
        return None if self.deadline_ms is None else self.received + self.deadline_ms / 1000

    def lease_end(self) -> Optional[float]:
        """When the lease the task was claimed with runs out, monotonic."""
        return None if self.lease_ms is None else self.received + self.lease_ms / 1000


class TaskFailure(Exception):
    """A task failure with a code and a retryability. Any other exception a
    handler raises fails the attempt as a retryable task_failed with its
    message."""

    def __init__(self, message: str, code: str = "task_failed", retryable: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.retryable = retryable


def permanent(err: BaseException | str, code: str = "") -> TaskFailure:
    """A failure not worth retrying: the step fails at once."""
    if isinstance(err, TaskFailure):
        return TaskFailure(err.message, code or err.code, retryable=False)
    return TaskFailure(str(err), code or "task_failed", retryable=False)


#: Why a handler's context was cancelled.
LOST = "lost"  # the server no longer wants the task: cancelled, or its lease ran out
SHUTDOWN = "shutdown"  # the worker is shutting down and hands the task back
DEADLINE = "deadline"  # the task's deadline passed


class TaskContext:
    """What a handler receives: the task, its secrets, and a cancellation
    event set when the task is cancelled or its lease lost (cause "lost"),
    its deadline passes ("deadline"), or the worker hands it back at
    shutdown ("shutdown"). A handler that runs for long should check
    ``cancelled`` (or wait with ``sleep``) and return when it is set."""

    def __init__(self, task: Task, worker_id: str) -> None:
        self.task = task
        self.worker_id = worker_id
        #: secrets the task declared, by name. Filled from the task's
        #: "secrets" field when the server sends one; empty until then.
        self.secrets: Mapping[str, str] = MappingProxyType(dict(task.secrets or {}))
        #: set when the handler should stop; see cause.
        self.cancelled = threading.Event()
        self.cause: Optional[str] = None
        self._wake = threading.Event()
        self._lock = threading.Lock()

    @property
    def input(self) -> Any:
        return self.task.input

    @property
    def attempt(self) -> int:
        return self.task.attempt

    @property
    def idempotency_key(self) -> str:
        return self.task.idempotency_key

    def sleep(self, seconds: float) -> bool:
        """Waits seconds, or less when cancelled; True when they passed."""
        return not self.cancelled.wait(seconds)

    def _cancel(self, cause: str) -> None:
        with self._lock:
            if self.cause is None:
                self.cause = cause
        self.cancelled.set()
        self._wake.set()
