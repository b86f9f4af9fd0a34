"""Workers: long-poll a queue for the tasks of registered handlers, run
them on threads with bounded concurrency, heartbeat while they run, and
complete or fail each one."""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import socket
import threading
import time
from typing import Any, Callable, Optional, Union
from urllib.parse import quote

from .client import Client
from .errors import APIError, DuctorError, is_status, retryable
from .task import DEADLINE, LOST, SHUTDOWN, Task, TaskContext, TaskFailure
from .transport import Abort

Handler = Callable[[TaskContext], Any]

#: The largest output a step takes, as JSON; more fails the step as
#: payload_too_large (not retried).
MAX_OUTPUT_BYTES = 1 << 20

#: How long a cancelled handler may take to return its own answer before
#: the worker answers for it.
CANCEL_GRACE = 0.25

#: The least time a result is offered for.
MIN_REPORT = 10.0


class Backoff:
    """An exponential delay with jitter between minimum and maximum; a
    server's Retry-After overrides it."""

    def __init__(self, minimum: float, maximum: float) -> None:
        self.min, self.max, self.next = minimum, maximum, 0.0

    def reset(self) -> None:
        self.next = 0.0

    def delay(self, err: Optional[BaseException] = None) -> float:
        if self.next == 0:
            self.next = self.min
        d = self.next
        self.next = min(2 * d, self.max)
        wait = d / 2 + random.uniform(0, d / 2)
        if isinstance(err, APIError) and err.retry_after is not None:
            return err.retry_after
        return wait


class Worker:
    """Serves one queue. Register handlers with ``handle``, then call
    ``run``, which blocks until ``stop`` (or SIGINT/SIGTERM when run in
    the main thread).

    concurrency bounds the tasks run at once; poll_wait is how long one
    poll waits for tasks (the server caps it at 30 s); heartbeat_every is
    how often a running task's lease is extended (default a third of the
    lease, at most 10 s); drain_timeout is how long running tasks may go
    on after stop before they are handed back to be retried."""

    def __init__(self, client: Client, *, queue: str = "default", concurrency: int = 10,
                 worker_id: str = "", poll_wait: float = 20.0, heartbeat_every: Optional[float] = None,
                 drain_timeout: float = 30.0, min_backoff: float = 0.1, max_backoff: float = 10.0,
                 logger: Optional[logging.Logger] = None) -> None:
        self.client = client
        self.queue = queue or "default"
        self.concurrency = max(concurrency, 1)
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}"
        self.poll_wait = poll_wait
        self.heartbeat_every = heartbeat_every
        self.drain_timeout = drain_timeout
        self.min_backoff = min_backoff
        self.max_backoff = max(max_backoff, min_backoff)
        self.log = logger or logging.getLogger("ductor.worker")
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Condition()
        self._active: set[TaskContext] = set()
        self._stopping = threading.Event()
        self._now = threading.Event()
        self._abort = Abort()

    def handle(self, name: str, fn: Optional[Handler] = None) -> Union[Handler, Callable[[Handler], Handler]]:
        """Registers fn under a handler name; without fn, a decorator."""
        def register(h: Handler) -> Handler:
            with self._lock:
                self._handlers[name] = h
            return h
        return register(fn) if fn is not None else register

    def stop(self, now: bool = False) -> None:
        """Asks run to stop polling, let running tasks finish (up to
        drain_timeout, or with now not at all, then hand them back) and
        return. Safe from any thread and from a signal handler."""
        if now:
            self._now.set()
        self._stopping.set()
        threading.Thread(target=self._wake_all, daemon=True).start()

    def _wake_all(self) -> None:
        self._abort.abort()
        with self._lock:
            self._lock.notify_all()

    def run(self, *, handle_signals: bool = True) -> None:
        """Polls for tasks and runs them until stop; then waits for running
        tasks and returns. Raises the APIError that makes polling pointless
        (a refused key, a malformed request); an unreachable or failing
        server is retried with backoff. With handle_signals, in the main
        thread, SIGINT and SIGTERM stop the worker, and a second one hands
        running tasks back at once. A worker runs once."""
        with self._lock:
            if not self._handlers:
                raise DuctorError("ductor: worker has no handlers")
        restore = self._install_signals() if handle_signals else {}
        try:
            self._poll_loop()
        finally:
            self._drain()
            for sig, h in restore.items():
                signal.signal(sig, h)

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        old = {}
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, lambda *_: self.stop(now=self._stopping.is_set()))
        return old

    def _poll_loop(self) -> None:
        b = Backoff(self.min_backoff, self.max_backoff)
        while not self._stopping.is_set():
            free = self._wait_for_slot()
            if free == 0:
                return
            try:
                tasks = self._poll(free)
            except DuctorError as e:
                if self._stopping.is_set():
                    return
                if not retryable(e):
                    raise
                self.log.warning("ductor worker: poll failed, retrying: %s", e)
                self._stopping.wait(b.delay(e))
                continue
            b.reset()
            for t in tasks:  # claimed tasks run, even just before a shutdown
                self._start(t)

    def _wait_for_slot(self) -> int:
        with self._lock:
            self._lock.wait_for(lambda: len(self._active) < self.concurrency or self._stopping.is_set())
            return 0 if self._stopping.is_set() else self.concurrency - len(self._active)

    def _names(self) -> list[str]:
        with self._lock:
            return sorted(self._handlers)

    def _poll(self, n: int) -> list[Task]:
        body = {"queue": self.queue, "handlers": self._names(), "worker_id": self.worker_id, "max": n,
                "wait_ms": int(self.poll_wait * 1000)}
        _, out = self.client._call("POST", "/tasks/poll", body, timeout=self.poll_wait + 30, abort=self._abort)
        received = time.monotonic()
        tasks = []
        for d in (out or {}).get("tasks") or []:
            t = Task.from_dict(d)
            t.received = received
            tasks.append(t)
        return tasks

    def _start(self, t: Task) -> None:
        ctx = TaskContext(t, self.worker_id)
        with self._lock:
            self._active.add(ctx)
        threading.Thread(target=self._execute, args=(ctx,), name=f"ductor-task-{t.id}", daemon=True).start()

    def _drain(self) -> None:
        with self._lock:
            self._lock.wait_for(lambda: not self._active or self._now.is_set(), timeout=self.drain_timeout)
            for ctx in list(self._active):
                ctx._cancel(SHUTDOWN)
            self._lock.wait_for(lambda: not self._active)

    def _execute(self, ctx: TaskContext) -> None:
        try:
            stop_beat = self._heartbeat(ctx)
            out, err = self._call(ctx)
            stop_beat()
            if ctx.cause == LOST:
                return  # nobody wants the answer
            self._report(ctx.task, out, err, ctx.cause)
        except Exception:  # a bug here must not leak the slot
            self.log.exception("ductor worker: task %s", ctx.task.id)
        finally:
            with self._lock:
                self._active.discard(ctx)
                self._lock.notify_all()

    def _call(self, ctx: TaskContext) -> tuple[Any, Optional[BaseException]]:
        """Runs the handler on its own thread and gives up on it when its
        context is cancelled or its deadline passes."""
        with self._lock:
            h = self._handlers.get(ctx.task.handler)
        if h is None:
            return None, TaskFailure(f"no handler {ctx.task.handler!r} on worker {self.worker_id}",
                                     "unknown_handler", retryable=False)
        result: list[Any] = []
        done = threading.Event()

        def target() -> None:
            try:
                result.append((h(ctx), None))
            except BaseException as e:  # noqa: B036: a handler's every failure is reported
                result.append((None, e))
            finally:
                done.set()
                ctx._wake.set()

        threading.Thread(target=target, name=f"ductor-handler-{ctx.task.id}", daemon=True).start()
        deadline = ctx.task.deadline_at()
        while not ctx._wake.is_set():
            timeout = None if deadline is None else max(deadline - time.monotonic(), 0)
            if not ctx._wake.wait(timeout) and deadline is not None:
                ctx._cancel(DEADLINE)
        if not result and ctx.cause != LOST:
            done.wait(CANCEL_GRACE)  # a handler that heeds the event answers itself
        if result:
            return result[0]
        return None, TaskFailure(f"handler stopped: {ctx.cause}", CAUSE_CODES.get(ctx.cause or "", "task_failed"))

    def _heartbeat_every(self, t: Task) -> float:
        if self.heartbeat_every:
            return self.heartbeat_every
        end = t.lease_end()
        if end is None:
            return 10.0
        return min(max((end - time.monotonic()) / 3, 0.05), 10.0)

    def _heartbeat(self, ctx: TaskContext) -> Callable[[], None]:
        """Extends the task's lease until the returned function is called;
        a 404 or 409 means the task is no longer wanted."""
        done = threading.Event()
        every = self._heartbeat_every(ctx.task)

        def beat() -> None:
            while not done.wait(every):
                try:
                    self._task_call(ctx.task, "heartbeat", {"token": ctx.task.token})
                except DuctorError as e:
                    if is_status(e, 409) or is_status(e, 404):
                        ctx._cancel(LOST)
                        return
                    if not done.is_set():
                        self.log.warning("ductor worker: heartbeat of task %s failed: %s", ctx.task.id, e)

        th = threading.Thread(target=beat, name=f"ductor-heartbeat-{ctx.task.id}", daemon=True)
        th.start()

        def stop() -> None:
            done.set()
            th.join()
        return stop

    def _report(self, t: Task, out: Any, err: Optional[BaseException], cause: Optional[str]) -> None:
        """Completes or fails the task, retrying while the server is
        unavailable and the task's lease may still hold."""
        verb, body = "complete", None
        if err is None:
            try:
                raw = json.dumps(out)
            except (TypeError, ValueError) as e:
                err = TaskFailure(f"output is not JSON: {e}", "invalid_output", retryable=False)
            else:
                if len(raw.encode()) > MAX_OUTPUT_BYTES:
                    err = TaskFailure(f"output is {len(raw.encode())} bytes of JSON, over the "
                                      f"{MAX_OUTPUT_BYTES}-byte limit", "payload_too_large", retryable=False)
                else:
                    body = {"token": t.token, "output": out}
        if err is not None:
            verb, body = "fail", {"token": t.token, "error": failure(err, cause)}
        end = time.monotonic() + self._report_for(t)
        b = Backoff(self.min_backoff, self.max_backoff)
        while True:
            try:
                self._task_call(t, verb, body)
                return
            except DuctorError as e:
                wait = b.delay(e)
                if not retryable(e) or time.monotonic() + wait > end:
                    self.log.warning("ductor worker: %s of task %s not delivered: %s", verb, t.id, e)
                    return
                time.sleep(wait)

    def _report_for(self, t: Task) -> float:
        d = max(self.max_backoff * 3, MIN_REPORT)
        end = t.lease_end()
        if end is not None:
            d = max(d, end - time.monotonic())
        return d

    def _task_call(self, t: Task, verb: str, body: Any) -> None:
        self.client._call("POST", f"/tasks/{quote(t.id, safe='')}/{verb}", body)


#: The failure code of a handler stopped by its context's cause: handed
#: back at shutdown (retried, unlike "cancelled", which the server never
#: retries), or out of time.
CAUSE_CODES = {SHUTDOWN: "worker_stopped", DEADLINE: "timeout"}


def failure(err: BaseException, cause: Optional[str] = None) -> dict[str, Any]:
    """The fail body's error for a handler's exception: a TaskFailure's
    code and retryability; any other exception retryable with its
    message, coded by the cause when the handler was stopped."""
    message = (str(err) or type(err).__name__)[:4096]
    if isinstance(err, TaskFailure):
        return {"code": err.code, "message": err.message[:4096] or message, "retryable": err.retryable}
    return {"code": CAUSE_CODES.get(cause or "", "task_failed"), "message": message, "retryable": True}
