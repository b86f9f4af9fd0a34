"""A scripted stand-in for the server's task API, to test a worker's side
of the protocol exactly: what it sends, and how it takes each answer."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Optional

# An answer: (status, body, headers).
Answer = tuple[int, Any, dict[str, str]]


class Stub:
    """Serves /api/v1/tasks/… from scripted answers and records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, str, Any]] = []  # (monotonic time, path, body)
        self.cv = threading.Condition()
        self.tasks: list[dict[str, Any]] = []
        self.poll_answers: list[Answer] = []  # answered before tasks are handed out
        self.heartbeat: Answer = (200, {"lease_until": "2030-01-01T00:00:00Z"}, {})
        self.max_wait = 0.2  # seconds an empty poll waits at most
        stub = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"null")
                status, out, headers = stub.answer(self.path, body)
                raw = json.dumps(out).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw)
                except OSError:
                    pass  # the worker went away (a poll aborted at shutdown)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_task(self, handler: str, input: Any = None, **extra: Any) -> str:
        tid = str(uuid.uuid4())
        t = {"id": tid, "token": "tok-" + tid, "handler": handler, "queue": "default", "input": input, "attempt": 1,
             "idempotency_key": "run:node", "lease_ms": 30000, "run_id": "run", "node": "node"}
        t.update(extra)
        with self.cv:
            self.tasks.append(t)
            self.cv.notify_all()
        return tid

    def answer(self, path: str, body: Any) -> Answer:
        with self.cv:
            self.calls.append((time.monotonic(), path, body))
            self.cv.notify_all()
            if path.endswith("/tasks/poll"):
                if self.poll_answers:
                    return self.poll_answers.pop(0)
                self.cv.wait_for(lambda: self.tasks, timeout=min(body.get("wait_ms", 0) / 1000, self.max_wait))
                out, self.tasks = self.tasks[: body.get("max", 1)], self.tasks[body.get("max", 1):]
                return 200, {"tasks": out}, {}
            if path.endswith("/heartbeat"):
                return self.heartbeat
            return 200, {"status": "ok"}, {}

    def wait_call(self, suffix: str, timeout: float = 10.0, pred: Optional[Callable[[Any], bool]] = None) -> Any:
        """Waits for a call whose path ends with suffix and returns its body."""
        def found() -> Any:
            return next((c for c in self.calls if c[1].endswith(suffix) and (pred is None or pred(c[2]))), None)
        with self.cv:
            if not self.cv.wait_for(found, timeout=timeout):
                raise AssertionError(f"no call to …{suffix} within {timeout}s; calls: {[c[1] for c in self.calls]}")
            return found()[2]

    def paths(self, suffix: str) -> list[tuple[float, str, Any]]:
        with self.cv:
            return [c for c in self.calls if c[1].endswith(suffix)]
