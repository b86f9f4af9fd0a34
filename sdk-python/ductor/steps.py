"""Typed settings of the fifteen step types, and a builder for each.

A zero field is left out, so the server's default applies (see the step
reference, docs/steps.md). Fields named ``*_expr`` are CEL expressions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping, Optional

from .definition import Duration, Retry, Step, StepType


@dataclass
class TaskWith:
    """Runs a named handler: one of the server's, or one a Worker registers."""

    handler: str
    #: sends it to the workers of another queue than "default".
    queue: str = ""
    #: default: the run input.
    input_expr: str = ""
    #: how long the task may wait for a worker before it fails with no_worker.
    schedule_to_start: Duration = None


@dataclass
class HTTPWith:
    """One HTTP request; set url or url_expr, and body or body_expr."""

    url: str = ""
    url_expr: str = ""
    method: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None
    body_expr: str = ""
    #: the statuses that succeed (default: any 2xx).
    expect_status: list[int] = field(default_factory=list)


@dataclass
class Template:
    """A scatter's ``do``: the task, http or transform step each inline
    child runs."""

    type: str
    #: TaskWith, HTTPWith, or {"expr": …}.
    with_: Any = None
    timeout: Duration = None
    retry: Optional[Retry] = None


@dataclass
class ScatterWith:
    """One child per element of items_expr: inline (do) or child runs
    (mode "child_workflow", workflow)."""

    items_expr: str
    key_expr: str = ""
    mode: str = ""
    do: Optional[Template] = None
    workflow: str = ""
    version: int = 0
    input_expr: str = ""
    max_inline_children: int = 0
    concurrency: int = 0
    interval_ms: int = 0


@dataclass
class GatherWith:
    scatter_ref: str
    #: partition (default), include, drop or raise.
    strategy: str = ""


@dataclass
class SubworkflowWith:
    """Starts a child run of workflow."""

    workflow: str
    version: int = 0
    #: sync (default) or async.
    mode: str = ""
    wait_for: str = ""
    input_expr: str = ""
    timeout: Duration = None
    #: fail_parent, detach or continue_with_error (sync mode).
    on_timeout: str = ""


@dataclass
class CheckpointWith:
    name: str
    output_expr: str = ""


@dataclass
class WaitWith:
    """When a wait step fires: exactly one of duration, until, cron (with
    timezone) or until_expr."""

    duration: Duration = None
    until: Optional[datetime] = None
    cron: str = ""
    timezone: str = ""
    until_expr: str = ""


@dataclass
class SignalWith:
    name: str
    timeout: Duration = None
    #: fail (default) or skip.
    on_timeout: str = ""


@dataclass
class EventWith:
    name: str
    match_expr: str = ""
    timeout: Duration = None
    #: fail (default) or skip.
    on_timeout: str = ""


@dataclass
class EventMember:
    """One event of an event set."""

    name: str
    match_expr: str = ""
    #: identifies the member and keys the output (default: the name).
    key: str = ""


@dataclass
class EventSetWith:
    events: list[EventMember]
    #: all_required (default), any, quorum, count (n of them) or until_timeout.
    policy: str = ""
    n: int = 0
    timeout: Duration = None
    #: fail (default) or succeed_partial.
    on_timeout: str = ""


@dataclass
class DigestWith:
    name: str
    match_expr: str = ""
    window: Duration = None
    max_items: int = 0


@dataclass
class ApprovalWith:
    """Waits for people (emails, role:NAME) to approve."""

    approvers: list[str]
    title: str = ""
    description: str = ""
    min_approvals: int = 0
    timeout: Duration = None
    #: fail (default), approve or skip.
    on_timeout: str = ""


@dataclass
class HumanLoopWith:
    """Opens a case for people to work."""

    title: str
    assignees: list[str] = field(default_factory=list)
    #: a JSON Schema of the case's data.
    fields: Any = None
    #: default resolved.
    awaiting_status: str = ""
    timeout: Duration = None
    #: fail (default) or skip.
    on_timeout: str = ""


def new_step(ref: str, type: str, with_: Any = None) -> Step:
    """A step of any type, its settings a dataclass or a mapping."""
    return Step(ref=ref, type=type, with_=with_)


def task_step(ref: str, w: TaskWith) -> Step:
    return new_step(ref, StepType.TASK, w)


def http_step(ref: str, w: HTTPWith) -> Step:
    return new_step(ref, StepType.HTTP, w)


def transform_step(ref: str, expr: str) -> Step:
    """Evaluates an expression; its value is the output."""
    return new_step(ref, StepType.TRANSFORM, {"expr": expr})


def condition_step(ref: str, expr: str) -> Step:
    """Ends true or false: follow it with on(ref, …, Outcome.TRUE) and
    on(ref, …, Outcome.FALSE)."""
    return new_step(ref, StepType.CONDITION, {"expr": expr})


def scatter_step(ref: str, w: ScatterWith) -> Step:
    return new_step(ref, StepType.SCATTER, w)


def gather_step(ref: str, scatter_ref: str, strategy: str = "") -> Step:
    """Collapses the children of the scatter scatter_ref."""
    return new_step(ref, StepType.GATHER, GatherWith(scatter_ref, strategy))


def subworkflow_step(ref: str, w: SubworkflowWith) -> Step:
    return new_step(ref, StepType.SUBWORKFLOW, w)


def checkpoint_step(ref: str, name: str, output_expr: str = "") -> Step:
    """A named point a parent can wait for (wait_for: checkpoint:NAME)."""
    return new_step(ref, StepType.CHECKPOINT, CheckpointWith(name, output_expr))


def wait_step(ref: str, w: WaitWith) -> Step:
    return new_step(ref, StepType.WAIT, w)


def signal_step(ref: str, w: SignalWith) -> Step:
    return new_step(ref, StepType.SIGNAL, w)


def event_step(ref: str, w: EventWith) -> Step:
    return new_step(ref, StepType.EVENT, w)


def event_set_step(ref: str, w: EventSetWith) -> Step:
    return new_step(ref, StepType.EVENT_SET, w)


def digest_step(ref: str, w: DigestWith) -> Step:
    return new_step(ref, StepType.DIGEST, w)


def approval_step(ref: str, w: ApprovalWith) -> Step:
    """Ends approved or rejected."""
    return new_step(ref, StepType.APPROVAL, w)


def human_loop_step(ref: str, w: HumanLoopWith) -> Step:
    return new_step(ref, StepType.HUMAN_LOOP, w)
