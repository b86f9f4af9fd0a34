"""Workers as separate processes against a real server: a killed worker's
task is retried and finished by another, a cancelled run stops its
handler within the heartbeat interval, and SIGTERM shuts a worker down."""

from __future__ import annotations

import os
import pathlib
import queue
import signal
import subprocess
import sys
import threading
import time
import unittest
from datetime import timedelta
from typing import Optional

from ductor import Definition, Retry, TaskWith, task_step

from support import client, live, unique

HERE = pathlib.Path(__file__).resolve().parent


class Process:
    """A worker process whose stdout lines the test reads as they come."""

    def __init__(self, queue_name: str, **env: str) -> None:
        self.lines: queue.Queue[str] = queue.Queue()
        self.p = subprocess.Popen([sys.executable, str(HERE / "worker_process.py")],
                                  env={**os.environ, "DUCTOR_QUEUE": queue_name, **env},
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.expect("ready")

    def _read(self) -> None:
        assert self.p.stdout is not None
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))

    def expect(self, prefix: str, timeout: float = 20.0) -> str:
        """The next line starting with prefix (earlier lines are skipped)."""
        end = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(end - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"worker {self.p.pid} said no {prefix!r} within {timeout}s") from None
            if line.startswith(prefix):
                return line

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(10)
        if self.p.stdout is not None:
            self.p.stdout.close()


def task_definition(key: str, q: str, timeout: Optional[timedelta] = None) -> Definition:
    step = task_step("work", TaskWith("test.block", queue=q))
    if timeout:
        step = step.with_timeout(timeout).with_retry(Retry(max_attempts=3, initial_interval=timedelta(milliseconds=100)))
    return Definition(key, [step])


@live
class ProcessTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()

    def worker(self, q: str, **env: str) -> Process:
        p = Process(q, **env)
        self.addCleanup(p.close)
        return p

    def test_a_killed_workers_task_is_finished_by_another(self) -> None:
        key, q = unique("py-kill"), unique("py-kill")
        self.c.publish(task_definition(key, q, timeout=timedelta(seconds=2)))
        first = self.worker(q, DUCTOR_BLOCK="1")
        run = self.c.start_run(key)
        first.expect("started")
        first.p.send_signal(signal.SIGKILL)
        first.p.wait(10)
        second = self.worker(q)
        done = self.c.wait_run(run.id, timeout=40)
        self.assertEqual(done.status, "succeeded", done.raw)
        out = done.output["work"]
        self.assertEqual(out["pid"], second.p.pid)
        self.assertGreaterEqual(out["attempt"], 2)

    def test_cancelling_a_run_stops_its_handler_within_the_heartbeat_interval(self) -> None:
        key, q = unique("py-cancel"), unique("py-cancel")
        self.c.publish(task_definition(key, q))
        every = 1.0
        w = self.worker(q, DUCTOR_BLOCK="1", DUCTOR_HEARTBEAT_EVERY=str(every))
        run = self.c.start_run(key)
        w.expect("started")
        cancelled = time.monotonic()
        self.c.cancel_run(run.id, "changed my mind")
        self.assertEqual(w.expect("stopped", timeout=10), "stopped lost")
        took = time.monotonic() - cancelled
        # Within one interval, plus the heartbeat's round trip on a loaded machine.
        self.assertLess(took, every + 1.0, f"the handler stopped {took:.2f}s after the cancel")
        self.assertEqual(self.c.wait_run(run.id).status, "cancelled")

        w.p.send_signal(signal.SIGTERM)  # idle: it stops polling and exits at once
        w.expect("exited", timeout=5)
        self.assertEqual(w.p.wait(5), 0)

    def test_sigterm_hands_back_a_running_task(self) -> None:
        key, q = unique("py-drain"), unique("py-drain")
        self.c.publish(task_definition(key, q))
        w = self.worker(q, DUCTOR_BLOCK="1", DUCTOR_DRAIN_TIMEOUT="0.5")
        run = self.c.start_run(key)
        w.expect("started")
        w.p.send_signal(signal.SIGTERM)
        self.assertEqual(w.expect("stopped", timeout=5), "stopped shutdown")
        w.expect("exited", timeout=5)
        self.assertEqual(w.p.wait(5), 0)
        second = self.worker(q)
        done = self.c.wait_run(run.id, timeout=30)
        self.assertEqual(done.status, "succeeded", done.raw)
        self.assertEqual(done.output["work"], {"pid": second.p.pid, "attempt": 2})


if __name__ == "__main__":
    unittest.main()
