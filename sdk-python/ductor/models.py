"""What the API answers, as dataclasses. Moments are RFC 3339 strings as
the server sends them; JSON values (inputs, outputs, details) are plain
Python values. Each has ``raw``: the whole object as the server sent it,
fields this SDK does not name included."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

T = TypeVar("T")


def from_dict(cls: type[T], d: Optional[dict[str, Any]]) -> T:
    """Builds cls from the fields of d it names; the rest stays in raw."""
    d = d or {}
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {k: v for k, v in d.items() if k in names and k != "raw"}
    obj = cls(**kwargs)
    obj.raw = d  # type: ignore[attr-defined]
    return obj


@dataclass
class Whoami:
    tenant_id: str = ""
    key_id: str = ""
    key_name: str = ""
    prefix: str = ""
    scopes: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Version:
    """A published version of a definition."""

    key: str = ""
    version: int = 0
    manifest_hash: str = ""
    #: False when the document was unchanged and the existing version was answered.
    created: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Compiled:
    manifest: Any = None
    manifest_hash: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Started:
    id: str = ""
    status: str = ""
    #: True when the idempotency key named a run already started.
    existing: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class RunError:
    code: str = ""
    message: str = ""
    retryable: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Waiting:
    type: str = ""
    name: str = ""
    until: Optional[str] = None
    approval_id: str = ""
    case_id: str = ""
    child_key: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Node:
    node: str = ""
    ref: str = ""
    type: str = ""
    state: str = ""
    attempt: int = 0
    generation: int = 0
    waiting: Optional[Waiting] = None
    output: Any = None
    error: Optional[RunError] = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Node:
        n = from_dict(cls, d)
        n.waiting = from_dict(Waiting, d["waiting"]) if d.get("waiting") else None
        n.error = from_dict(RunError, d["error"]) if d.get("error") else None
        return n


TERMINAL = frozenset({"succeeded", "failed", "cancelled", "timed_out", "terminated"})


@dataclass
class Run:
    id: str = ""
    definition: str = ""
    version: int = 0
    status: str = ""
    reason: str = ""
    input: Any = None
    output: Any = None
    error: Optional[RunError] = None
    subject: str = ""
    parent_run_id: str = ""
    root_run_id: str = ""
    continued_to_run_id: str = ""
    continued_from_run_id: str = ""
    context: Any = None
    search_attributes: Optional[dict[str, Any]] = None
    depth: int = 0
    transition_count: int = 0
    created_at: str = ""
    finished_at: Optional[str] = None
    trace_id: str = ""
    nodes: list[Node] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Run:
        r = from_dict(cls, d)
        r.error = from_dict(RunError, d["error"]) if d.get("error") else None
        r.nodes = [Node.from_dict(n) for n in d.get("nodes") or []]
        return r

    @property
    def terminal(self) -> bool:
        """Whether the run has ended."""
        return self.status in TERMINAL

    def node(self, name: str) -> Optional[Node]:
        """The node named name, if the run has it."""
        return next((n for n in self.nodes if n.node == name), None)


@dataclass
class RunPage:
    """A page of runs, newest first; next_cursor is empty on the last page."""

    runs: list[Run] = field(default_factory=list)
    next_cursor: str = ""


@dataclass
class Transition:
    seq: int = 0
    at: str = ""
    node: str = ""
    to: str = ""
    generation: int = 0
    attempt: int = 0
    detail: str = ""
    #: "from" in the answer.
    from_: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class DefinitionInfo:
    key: str = ""
    name: str = ""
    latest_version: Optional[int] = None
    has_draft: bool = False
    created_at: str = ""
    updated_at: str = ""
    #: only from get_definition: the versions as dicts.
    versions: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class DefinitionPage:
    definitions: list[DefinitionInfo] = field(default_factory=list)
    next_cursor: str = ""


@dataclass
class VersionInfo:
    key: str = ""
    version: int = 0
    manifest_hash: str = ""
    format: str = ""
    published: bool = False
    published_at: str = ""
    unpublished_at: Optional[str] = None
    source: str = ""
    manifest: Any = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Approval:
    id: str = ""
    run_id: str = ""
    node: str = ""
    title: str = ""
    description: str = ""
    approvers: list[str] = field(default_factory=list)
    min_approvals: int = 0
    status: str = ""
    expires_at: Optional[str] = None
    created_at: str = ""
    decided_at: Optional[str] = None
    decisions: Any = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Case:
    id: str = ""
    run_id: str = ""
    node: str = ""
    title: str = ""
    assignees: list[str] = field(default_factory=list)
    fields: Any = None
    awaiting_status: str = ""
    status: str = ""
    data: Any = None
    created_at: str = ""
    updated_at: str = ""
    #: what a list asked for but left out for its size ("data").
    truncated: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Webhook:
    id: str = ""
    event: str = ""
    scheme: str = ""
    url: str = ""
    #: only in the answers of create_webhook and rotate_webhook.
    secret: str = ""
    secret_hint: str = ""
    deliveries: int = 0
    created_at: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class WebhookDelivery:
    """One result of a webhook's delivery log: result is "accepted" or
    "refused"; outcome accepted, duplicate, bad_signature,
    stale_timestamp, invalid_body, too_large or id_reused; reason why a
    refused one was; event_id the event an accepted one made and run_ids
    the runs it started; count how many deliveries it stands for."""
    seq: int = 0
    at: str = ""
    result: str = ""
    outcome: str = ""
    reason: str = ""
    status: int = 0
    count: int = 0
    event_id: Optional[str] = None
    run_ids: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Upgrade:
    """The plan of an upgrade, or of a retry on a version, as planned or
    applied: plan holds nodes (each ref's outcome), missing_reads,
    refusals, reruns, reconsider and summary, as the server sends them."""

    run_id: str = ""
    from_version: int = 0
    to_version: int = 0
    dry_run: bool = False
    #: False on a dry run, a refusal or a no-op.
    applied: bool = False
    noop: bool = False
    plan: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def reruns(self) -> list[dict[str, Any]]:
        """The nodes that would run again; fires_again flags a side
        effect that already happened."""
        return list(self.plan.get("reruns") or [])

    @property
    def refusals(self) -> list[dict[str, Any]]:
        """Why the plan cannot be applied, each with its path and message."""
        return list(self.plan.get("refusals") or [])

    @property
    def reconsider(self) -> list[str]:
        """Pending steps whose predecessors have finished: the upgrade
        starts (or skips) them at once."""
        return list(self.plan.get("reconsider") or [])


@dataclass
class Secret:
    """A tenant secret's metadata; its value is never read back."""

    name: str = ""
    description: str = ""
    #: 1 when created, one more at each rotation.
    version: int = 0
    created_at: str = ""
    created_by: str = ""
    updated_at: str = ""
    updated_by: str = ""
    last_used_at: Optional[str] = None
    #: only from get_secret: the published definition versions that
    #: reference it ({"key", "version"}), newest first.
    used_by: list[dict[str, Any]] = field(default_factory=list)
    #: only from put_secret: True when the put created the secret.
    created: bool = False
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class SecretPage:
    secrets: list[Secret] = field(default_factory=list)
    next_cursor: str = ""


@dataclass
class UsageReport:
    """Metered use from from_ to to (dates): total, and days or
    definitions by group_by, each a dict of counters (runs_started,
    steps, step_microseconds, …, and steps_by_type: step type →
    {steps, step_microseconds}); quota is the tenant's quotas now."""

    #: "from" in the answer.
    from_: str = ""
    to: str = ""
    group_by: str = ""
    total: dict[str, Any] = field(default_factory=dict)
    days: list[dict[str, Any]] = field(default_factory=list)
    definitions: list[dict[str, Any]] = field(default_factory=list)
    quota: Any = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Subscription:
    id: str = ""
    url: str = ""
    events: list[str] = field(default_factory=list)
    filter_expr: str = ""
    description: str = ""
    #: only in the answers of create_subscription and rotate_subscription.
    secret: str = ""
    failures: int = 0
    disabled: bool = False
    disabled_at: Optional[str] = None
    disabled_reason: str = ""
    previous_secret_until: Optional[str] = None
    created_at: str = ""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Delivery:
    """A subscription's delivery of one event, with its attempts."""

    id: str = ""
    event_id: str = ""
    event: str = ""
    status: str = ""
    next_attempt_at: Optional[str] = None
    created_at: str = ""
    finished_at: Optional[str] = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
