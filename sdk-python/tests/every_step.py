"""A definition with each of the fifteen builders: the twin of the Go
SDK's everyStep, whose JSON is testdata/every_step.json and whose YAML
twin is testdata/every_step.yaml."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from ductor import (
    ApprovalWith,
    Definition,
    DigestWith,
    EventMember,
    EventSetWith,
    EventWith,
    HTTPWith,
    HumanLoopWith,
    Limits,
    Outcome,
    Retry,
    ScatterWith,
    SignalWith,
    StepType,
    SubworkflowWith,
    TaskWith,
    Template,
    WaitWith,
    approval_step,
    checkpoint_step,
    choose,
    condition_step,
    digest_step,
    event_set_step,
    event_step,
    gather_step,
    http_step,
    human_loop_step,
    on,
    otherwise,
    scatter_step,
    signal_step,
    subworkflow_step,
    task_step,
    then,
    transform_step,
    wait_step,
    when,
)

HOUR = timedelta(hours=1)


def every_step(key: str = "sdk-every-step") -> Definition:
    return Definition(
        key=key,
        name="Every step",
        timeout=72 * HOUR,
        input_schema={"type": "object"},
        limits=Limits(max_inline_children=100),
        steps=[
            task_step("task", TaskWith("builtin.echo", queue="default", input_expr="input", schedule_to_start=timedelta(minutes=10)))
            .with_retry(Retry(max_attempts=5, initial_interval=timedelta(milliseconds=500), backoff_coefficient=1.5,
                              max_interval=timedelta(minutes=1), jitter=False))
            .with_timeout(timedelta(seconds=90))
            .named("Echo"),
            http_step("http", HTTPWith(url="https://api.example.com/orders", method="post", headers={"X-A": "b"},
                                       body={"a": 1}, expect_status=[200, 201])),
            transform_step("transform", '{"n": 1}').only_if("true"),
            condition_step("condition", "input.size() > 0"),
            scatter_step("scatter", ScatterWith("[1, 2]", key_expr="string(item)", concurrency=2, interval_ms=5,
                                                max_inline_children=10,
                                                do=Template(StepType.HTTP, HTTPWith(url_expr='"https://x.test/" + string(item)'),
                                                            timeout=timedelta(seconds=1)))),
            gather_step("gather", "scatter", "include"),
            scatter_step("children", ScatterWith("[1]", mode="child_workflow", workflow="child", version=2, input_expr="item")),
            subworkflow_step("sub", SubworkflowWith("child", wait_for="checkpoint:ready", timeout=HOUR, on_timeout="detach")),
            subworkflow_step("async", SubworkflowWith("child", mode="async")),
            checkpoint_step("checkpoint", "ready", '{"ok": true}'),
            wait_step("wait", WaitWith(duration=timedelta(seconds=90))),
            wait_step("until", WaitWith(until=datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc))),
            wait_step("cron", WaitWith(cron="0 2 * * *", timezone="Europe/Paris")),
            signal_step("signal", SignalWith("go", timeout=HOUR, on_timeout="skip")),
            event_step("event", EventWith("paid", match_expr="event.id == input.id", timeout=HOUR)),
            event_set_step("event_set", EventSetWith(
                [EventMember("a"), EventMember("b", match_expr="true"), EventMember("b", key="second-b")],
                policy="quorum", n=1, timeout=HOUR, on_timeout="succeed_partial")),
            digest_step("digest", DigestWith("signup", window=timedelta(minutes=10), max_items=50)),
            approval_step("approval", ApprovalWith(["a@example.com", "role:admin"], title="OK?", min_approvals=2,
                                                   timeout=HOUR, on_timeout="approve")),
            human_loop_step("human_loop", HumanLoopWith("Look", assignees=["role:operator"], fields={"type": "object"},
                                                        awaiting_status="done", timeout=24 * HOUR)),
            transform_step("each", "item").each("[1, 2]").join_any().continue_on_error(),
        ],
        edges=[
            then("task", "http"),
            on("condition", "transform", Outcome.TRUE),
            on("approval", "each", Outcome.APPROVED),
            on("approval", "wait", Outcome.DONE),
            then("scatter", "gather"),
            choose("checkpoint", when("input.x == 1", "signal"), otherwise("event")),
        ],
    )
