"""The client against a real server: every operation, and errors typed."""

from __future__ import annotations

import pathlib
import unittest

from ductor import (
    APIError,
    ApprovalWith,
    Definition,
    HumanLoopWith,
    Outcome,
    SignalWith,
    EventWith,
    TaskWith,
    WaitWith,
    approval_step,
    event_step,
    human_loop_step,
    is_status,
    new_step,
    on,
    signal_step,
    task_step,
    transform_step,
    wait_step,
)
from datetime import timedelta

from every_step import every_step
from support import client, eventually, live, unique

TESTDATA = pathlib.Path(__file__).resolve().parent.parent / "testdata"


@live
class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()

    def test_every_step_compiles_as_its_yaml_twin(self) -> None:
        from_values = self.c.compile(every_step())
        from_yaml = self.c.compile((TESTDATA / "every_step.yaml").read_text(), yaml=True)
        self.assertTrue(from_values.manifest_hash)
        self.assertEqual(from_values.manifest_hash, from_yaml.manifest_hash)
        published = self.c.publish(every_step(unique("every-step")))
        self.assertEqual(published.version, 1)
        self.assertTrue(published.created)

    def test_publish_start_twice_and_read_back(self) -> None:
        key = unique("greet")
        d = Definition(key, [transform_step("hello", '"hello, " + input.name')])
        v = self.c.publish(d)
        self.assertEqual((v.key, v.version, v.created), (key, 1, True))
        again = self.c.publish(d)
        self.assertEqual((again.version, again.created), (1, False))

        first = self.c.start_run(key, {"name": "ada"}, idempotency_key="greet-ada")
        second = self.c.start_run(key, {"name": "ada"}, idempotency_key="greet-ada")
        self.assertFalse(first.existing)
        self.assertTrue(second.existing)
        self.assertEqual(first.id, second.id)
        run = self.c.wait_run(first.id, timeout=30)
        self.assertEqual(run.status, "succeeded")
        self.assertEqual(run.output, {"hello": "hello, ada"})
        self.assertEqual(run.node("hello").state, "succeeded")
        page = self.c.list_runs(definition=key)
        self.assertEqual([r.id for r in page.runs], [first.id])
        self.assertGreaterEqual(len(self.c.run_history(first.id)), 3)

    def test_errors_are_typed(self) -> None:
        with self.assertRaises(APIError) as missing:
            self.c.get_run("00000000-0000-0000-0000-000000000000")
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "not_found"))
        self.assertTrue(missing.exception.message)
        with self.assertRaises(APIError) as invalid:
            self.c.publish(Definition(unique("bad"), [new_step("x", "sleep")]))
        self.assertEqual(invalid.exception.status, 422)
        self.assertEqual(invalid.exception.code, "invalid_definition")
        self.assertIn("wait", str(invalid.exception.details))

    def test_paging(self) -> None:
        key = unique("paged")
        self.c.publish(Definition(key, [transform_step("a", "1")]))
        ids = [self.c.start_run(key).id for _ in range(3)]
        seen, cursor = [], ""
        while True:
            page = self.c.list_runs(definition=key, limit=2, cursor=cursor)
            seen += [r.id for r in page.runs]
            if not page.next_cursor:
                break
            cursor = page.next_cursor
        self.assertEqual(seen, ids[::-1])
        defs = self.c.list_definitions(limit=1)
        self.assertEqual(len(defs.definitions), 1)
        self.assertTrue(defs.next_cursor)

    def test_signal_event_cancel_and_retry(self) -> None:
        key = unique("gate")
        self.c.publish(Definition(key, [signal_step("open", SignalWith("go"))]))
        run = self.c.start_run(key)
        self.c.signal(run.id, "r1", "go", {"n": 7})
        with self.assertRaises(APIError) as repeat:
            self.c.signal(run.id, "r1", "go")
        self.assertEqual(repeat.exception.status, 409)
        self.assertEqual(self.c.wait_run(run.id).status, "succeeded")

        key = unique("paid")
        self.c.publish(Definition(key, [event_step("paid", EventWith(key, match_expr="event.id == input.id"))]))
        run = self.c.start_run(key, {"id": 3})
        eventually(lambda: self.c.get_run(run.id).status == "waiting", what="the run to wait")
        self.assertTrue(self.c.publish_event(key, {"id": 3}, idempotency_key=unique("paid-3")))
        self.assertEqual(self.c.wait_run(run.id).status, "succeeded")

        key = unique("sleepy")
        self.c.publish(Definition(key, [wait_step("nap", WaitWith(duration=timedelta(hours=1)))]))
        run = self.c.start_run(key)
        eventually(lambda: self.c.get_run(run.id).status == "waiting", what="the run to wait")
        self.c.cancel_run(run.id, "not today")
        self.assertEqual(self.c.wait_run(run.id).status, "cancelled")
        naps = [self.c.start_run(key).id for _ in range(2)]
        batch = self.c.create_batch("cancel", run_ids=naps, reason="bulk")
        eventually(lambda: self.c.get_batch(batch["id"])["status"] == "completed", what="the batch")
        self.assertEqual(self.c.get_batch(batch["id"])["done"] + self.c.get_batch(batch["id"])["failed"], 2)
        self.assertEqual({self.c.wait_run(i).status for i in naps}, {"cancelled"})
        with self.assertRaises(APIError) as ended:
            self.c.stop_batch(batch["id"])
        self.assertEqual(ended.exception.status, 409)

        key = unique("boom")
        self.c.publish(Definition(key, [task_step("boom", TaskWith("builtin.fail"))]))
        run = self.c.start_run(key)
        self.assertEqual(self.c.wait_run(run.id).status, "failed")
        self.c.retry_node(run.id, "boom")
        retried = eventually(lambda: (r := self.c.get_run(run.id)).terminal and r.nodes[0].generation == 1 and r,
                             what="the retried node to end")
        self.assertEqual(retried.status, "failed")

    def test_approvals_and_cases(self) -> None:
        me = "key:" + self.c.whoami().key_name
        key = unique("inbox")
        self.c.publish(Definition(key, [
            approval_step("ok", ApprovalWith([me], title="Ship it?")),
            human_loop_step("work", HumanLoopWith("Work")),
        ], edges=[on("ok", "work", Outcome.APPROVED)]))
        run = self.c.start_run(key)
        approval = eventually(lambda: next((a for a in self.c.list_approvals("pending") if a.run_id == run.id), None),
                              what="the approval")
        decided = self.c.decide_approval(approval.id, True, "fine")
        self.assertEqual(decided.status, "approved")
        self.assertEqual(self.c.get_approval(approval.id).status, "approved")
        with self.assertRaises(APIError) as twice:
            self.c.decide_approval(approval.id, False)
        self.assertTrue(is_status(twice.exception, 409))
        case = eventually(lambda: next((c for c in self.c.list_cases("open") if c.run_id == run.id), None),
                          what="the case")
        self.assertEqual(self.c.update_case(case.id, "working", {"done": "yes"}).status, "working")
        self.assertEqual(self.c.get_case(case.id).data, {"done": "yes"})
        listed = [c for c in self.c.list_cases("working", with_data=True) if c.id == case.id]
        self.assertEqual(listed[0].data, {"done": "yes"})
        self.c.update_case(case.id, "resolved")
        done = self.c.wait_run(run.id)
        self.assertEqual(done.status, "succeeded")
        self.assertIn("yes", str(done.output))

    def test_definitions_and_triggers(self) -> None:
        key = unique("drafted")
        d = Definition(key, [transform_step("hi", '"hi"')])
        compiled = self.c.compile(d)
        self.c.save_draft(d)
        v = self.c.publish_draft(key)
        self.assertEqual((v.version, v.manifest_hash), (1, compiled.manifest_hash))
        info = self.c.get_definition(key)
        self.assertEqual(info.latest_version, 1)
        self.assertTrue(self.c.get_version(key, 1).source)
        self.assertIn("with_event_set", str(self.c.definition_schema()))
        sched = unique("hourly")
        self.c.triggers.create_schedule({"id": sched, "definition": key, "spec": {"interval": "1h"}, "paused": True})
        self.assertTrue(self.c.triggers.get_schedule(sched)["paused"])
        self.assertIn("run_id", str(self.c.triggers.trigger_schedule(sched, "allow_all")))
        self.c.triggers.delete_schedule(sched)
        hook = self.c.triggers.create_webhook(unique("psp"), "payment.settled")
        self.assertTrue(hook.secret)
        self.assertNotEqual(self.c.triggers.rotate_webhook(hook.id).secret, hook.secret)
        self.assertEqual(self.c.triggers.webhook_deliveries(hook.id, result="refused"), [])
        self.c.triggers.delete_webhook(hook.id)
        self.c.unpublish(key, 1)
        with self.assertRaises(APIError):
            self.c.start_run(key)


if __name__ == "__main__":
    unittest.main()
