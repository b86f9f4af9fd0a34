"""Definitions as values serialise to the documents a file would hold."""

from __future__ import annotations

import json
import pathlib
import unittest
from datetime import timedelta

from ductor import Definition, Retry, go_duration, task_step, TaskWith, transform_step

from every_step import every_step

TESTDATA = pathlib.Path(__file__).resolve().parent.parent / "testdata"


class DefinitionTest(unittest.TestCase):
    def test_every_step_is_the_golden_document(self) -> None:
        want = json.loads((TESTDATA / "every_step.json").read_text())
        got = json.loads(every_step().to_json())
        self.maxDiff = None
        self.assertEqual(got, want)

    def test_go_durations(self) -> None:
        for d, want in [
            (timedelta(hours=72), "72h0m0s"), (timedelta(seconds=90), "1m30s"), (timedelta(milliseconds=500), "500ms"),
            (timedelta(seconds=1), "1s"), (timedelta(seconds=1.5), "1.5s"), (timedelta(microseconds=1500), "1.5ms"),
            (timedelta(microseconds=7), "7µs"), (timedelta(hours=1, seconds=0.25), "1h0m0.25s"), (timedelta(0), "0s"),
            (-timedelta(seconds=2), "-2s"),
        ]:
            self.assertEqual(go_duration(d), want, d)

    def test_zero_fields_are_left_out(self) -> None:
        doc = Definition("k", [task_step("a", TaskWith("h")).with_retry(Retry(jitter=True))]).to_dict()
        self.assertEqual(doc, {"key": "k", "steps": [{"ref": "a", "type": "task", "with": {"handler": "h"},
                                                      "retry": {"jitter": True}}]})

    def test_durations_may_be_strings(self) -> None:
        s = task_step("a", TaskWith("h", schedule_to_start="PT5M")).with_timeout("90s").to_dict()
        self.assertEqual(s["timeout"], "90s")
        self.assertEqual(s["with"]["schedule_to_start"], "PT5M")

    def test_set_adds_a_setting(self) -> None:
        s = transform_step("a", "1").set("extra", timedelta(seconds=2)).to_dict()
        self.assertEqual(s["with"], {"expr": "1", "extra": "2s"})

    def test_validate(self) -> None:
        with self.assertRaises(ValueError):
            Definition("").validate()
        with self.assertRaises(ValueError):
            Definition("k").validate()


if __name__ == "__main__":
    unittest.main()
