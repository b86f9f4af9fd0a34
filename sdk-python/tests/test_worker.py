"""A worker's side of the task protocol, against a scripted server."""

from __future__ import annotations

import logging
import threading
import time
import unittest
from typing import Any

from ductor import APIError, Client, LOST, SHUTDOWN, TaskContext, Worker, permanent

from stub import Stub

QUIET = logging.getLogger("ductor.test")
QUIET.addHandler(logging.NullHandler())
QUIET.propagate = False


class WorkerTest(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = Stub()
        self.addCleanup(self.stub.close)
        self.client = Client(self.stub.url, "dk_test")

    def start(self, **opts: Any) -> Worker:
        opts.setdefault("poll_wait", 0.2)
        opts.setdefault("min_backoff", 0.01)
        opts.setdefault("max_backoff", 0.05)
        opts.setdefault("logger", QUIET)
        return Worker(self.client, **opts)

    def run_in_thread(self, w: Worker) -> threading.Thread:
        th = threading.Thread(target=w.run, kwargs={"handle_signals": False}, daemon=True)
        th.start()

        def stop() -> None:
            w.stop()
            th.join(10)
            self.assertFalse(th.is_alive(), "the worker did not stop")
        self.addCleanup(stop)
        return th

    def test_completes_with_the_handler_result(self) -> None:
        w = self.start(queue="py", worker_id="w1")
        w.handle("greet", lambda ctx: {"greeting": "hello, " + ctx.input["name"]})
        tid = self.stub.add_task("greet", {"name": "ada"})
        self.run_in_thread(w)
        body = self.stub.wait_call(f"/tasks/{tid}/complete")
        self.assertEqual(body, {"token": "tok-" + tid, "output": {"greeting": "hello, ada"}})
        poll = self.stub.wait_call("/tasks/poll")
        self.assertEqual((poll["queue"], poll["handlers"], poll["worker_id"], poll["max"], poll["wait_ms"]),
                         ("py", ["greet"], "w1", 10, 200))

    def test_an_exception_is_a_retryable_failure_with_its_message(self) -> None:
        w = self.start()

        @w.handle("charge")
        def charge(ctx: TaskContext) -> Any:
            raise RuntimeError("card declined")

        w.handle("refuse", lambda ctx: (_ for _ in ()).throw(permanent("no such card", code="bad_card")))
        w.handle("odd", lambda ctx: object())
        a, b, c = self.stub.add_task("charge"), self.stub.add_task("refuse"), self.stub.add_task("odd")
        self.run_in_thread(w)
        self.assertEqual(self.stub.wait_call(f"/tasks/{a}/fail")["error"],
                         {"code": "task_failed", "message": "card declined", "retryable": True})
        self.assertEqual(self.stub.wait_call(f"/tasks/{b}/fail")["error"],
                         {"code": "bad_card", "message": "no such card", "retryable": False})
        self.assertEqual(self.stub.wait_call(f"/tasks/{c}/fail")["error"]["code"], "invalid_output")

    def test_backoff_honours_retry_after(self) -> None:
        self.stub.poll_answers = [
            (429, {"error": {"code": "rate_limited", "message": "slow down"}}, {"Retry-After": "1"}),
            (503, {"error": {"code": "unavailable", "message": "stopping"}}, {"Retry-After": "0.5"}),
        ]
        w = self.start()
        w.handle("h", lambda ctx: 1)
        tid = self.stub.add_task("h")
        self.run_in_thread(w)
        self.stub.wait_call(f"/tasks/{tid}/complete")
        polls = [c[0] for c in self.stub.paths("/tasks/poll")]
        self.assertGreaterEqual(polls[1] - polls[0], 0.95)
        self.assertGreaterEqual(polls[2] - polls[1], 0.45)

    def test_a_refused_key_ends_run(self) -> None:
        self.stub.poll_answers = [(401, {"error": {"code": "unauthorized", "message": "bad key"}}, {})]
        w = self.start()
        w.handle("h", lambda ctx: 1)
        with self.assertRaises(APIError) as e:
            w.run(handle_signals=False)
        self.assertEqual((e.exception.status, e.exception.code), (401, "unauthorized"))

    def test_runs_up_to_concurrency_tasks_at_once(self) -> None:
        together = threading.Barrier(3, timeout=5)
        w = self.start(concurrency=3)
        w.handle("meet", lambda ctx: together.wait())
        ids = [self.stub.add_task("meet") for _ in range(3)]
        self.run_in_thread(w)
        for tid in ids:
            self.stub.wait_call(f"/tasks/{tid}/complete")
        self.assertEqual(self.stub.wait_call("/tasks/poll")["max"], 3)

    def test_a_lost_lease_stops_the_handler_and_reports_nothing(self) -> None:
        self.stub.heartbeat = (409, {"error": {"code": "conflict", "message": "lease lost"}}, {})
        causes: list[Any] = []
        w = self.start(heartbeat_every=0.05)

        @w.handle("long")
        def long(ctx: TaskContext) -> Any:
            causes.append(ctx.cancelled.wait(5) and ctx.cause)
            return "late"

        tid = self.stub.add_task("long")
        self.run_in_thread(w)
        self.stub.wait_call(f"/tasks/{tid}/heartbeat")
        w.stop()
        deadline = time.monotonic() + 5
        while not causes and time.monotonic() < deadline:
            time.sleep(0.01)
        self.assertEqual(causes, [LOST])
        self.assertEqual(self.stub.paths(f"/tasks/{tid}/complete") + self.stub.paths(f"/tasks/{tid}/fail"), [])

    def test_shutdown_finishes_or_hands_back_running_tasks(self) -> None:
        started = threading.Semaphore(0)
        causes: list[Any] = []
        w = self.start(drain_timeout=0.3, concurrency=2)

        @w.handle("quick")
        def quick(ctx: TaskContext) -> Any:
            started.release()
            time.sleep(0.1)
            return "done"

        @w.handle("stuck")
        def stuck(ctx: TaskContext) -> Any:
            started.release()
            ctx.cancelled.wait(10)
            causes.append(ctx.cause)
            raise RuntimeError("interrupted")

        q, s = self.stub.add_task("quick"), self.stub.add_task("stuck")
        th = self.run_in_thread(w)
        self.assertTrue(started.acquire(timeout=5) and started.acquire(timeout=5))
        w.stop()
        th.join(5)
        self.assertFalse(th.is_alive())
        self.assertEqual(self.stub.wait_call(f"/tasks/{q}/complete")["output"], "done")
        handed_back = self.stub.wait_call(f"/tasks/{s}/fail")["error"]
        self.assertEqual((handed_back["code"], handed_back["retryable"]), ("worker_stopped", True))
        self.assertEqual(causes, [SHUTDOWN])

    def test_stop_now_hands_back_at_once(self) -> None:
        started = threading.Event()
        w = self.start(drain_timeout=30)

        @w.handle("stuck")
        def stuck(ctx: TaskContext) -> Any:
            started.set()
            ctx.cancelled.wait(30)
            raise RuntimeError("interrupted")

        tid = self.stub.add_task("stuck")
        th = self.run_in_thread(w)
        self.assertTrue(started.wait(5))
        w.stop()
        self.assertTrue(th.is_alive())  # draining
        w.stop(now=True)
        th.join(5)
        self.assertFalse(th.is_alive())
        self.assertEqual(self.stub.wait_call(f"/tasks/{tid}/fail")["error"]["code"], "worker_stopped")

    def test_stop_ends_a_long_poll_at_once(self) -> None:
        self.stub.max_wait = 20
        w = self.start(poll_wait=20)
        w.handle("h", lambda ctx: 1)
        th = self.run_in_thread(w)
        self.stub.wait_call("/tasks/poll")
        stopped = time.monotonic()
        w.stop()
        th.join(5)
        self.assertFalse(th.is_alive())
        self.assertLess(time.monotonic() - stopped, 2)

    def test_a_deadline_cancels_the_handler(self) -> None:
        w = self.start()

        @w.handle("slow")
        def slow(ctx: TaskContext) -> Any:
            if not ctx.sleep(5):
                raise RuntimeError("gave up: " + str(ctx.cause))
            return "slept"

        tid = self.stub.add_task("slow", deadline_ms=100)
        self.run_in_thread(w)
        err = self.stub.wait_call(f"/tasks/{tid}/fail", timeout=3)["error"]
        self.assertEqual((err["code"], err["retryable"]), ("timeout", True))

    def test_secrets_the_task_declares_reach_the_handler(self) -> None:
        w = self.start()
        w.handle("vendor", lambda ctx: dict(ctx.secrets))
        plain = self.stub.add_task("vendor")
        with_secrets = self.stub.add_task("vendor", secrets={"API_TOKEN": "s3cret"})
        self.run_in_thread(w)
        self.assertEqual(self.stub.wait_call(f"/tasks/{plain}/complete")["output"], {})
        self.assertEqual(self.stub.wait_call(f"/tasks/{with_secrets}/complete")["output"], {"API_TOKEN": "s3cret"})


if __name__ == "__main__":
    unittest.main()
