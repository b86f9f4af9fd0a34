"""Definitions as values.

A :class:`Definition` built here serialises (``to_dict``, ``to_json``) to
exactly the JSON document a user would write in a file, so the server
compiles both the same. Durations are :class:`datetime.timedelta` (written
as Go duration strings, ``"1m30s"``) or strings the server reads (``"90s"``,
``"PT90S"``); moments are aware :class:`datetime.datetime` values (written
in RFC 3339, UTC). A field left at its zero value (``""``, ``0``, ``None``,
an empty list) is left out, so the server's default applies.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping, Optional, Union

Duration = Union[timedelta, str, None]


class StepType:
    """The fifteen step types."""

    TASK = "task"
    HTTP = "http"
    TRANSFORM = "transform"
    CONDITION = "condition"
    SCATTER = "scatter"
    GATHER = "gather"
    SUBWORKFLOW = "subworkflow"
    CHECKPOINT = "checkpoint"
    WAIT = "wait"
    SIGNAL = "signal"
    EVENT = "event"
    EVENT_SET = "event_set"
    DIGEST = "digest"
    APPROVAL = "approval"
    HUMAN_LOOP = "human_loop"


class Outcome:
    """The outcomes an edge fires on."""

    SUCCESS = "success"
    ERROR = "error"
    TRUE = "true"
    FALSE = "false"
    APPROVED = "approved"
    REJECTED = "rejected"
    DONE = "done"


def go_duration(d: timedelta) -> str:
    """Spells d as Go's time.Duration.String does: ``1h0m0s``, ``1m30s``, ``500ms``."""
    us = d // timedelta(microseconds=1)
    if us == 0:
        return "0s"
    sign, us = ("-", -us) if us < 0 else ("", us)
    if us < 1_000_000:
        if us < 1000:
            return f"{sign}{us}µs"
        return f"{sign}{_trim(us, 1000)}ms"
    hours, rest = divmod(us, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    secs = _trim(rest, 1_000_000) + "s"
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}"
    if minutes:
        return f"{sign}{minutes}m{secs}"
    return sign + secs


def _trim(n: int, unit: int) -> str:
    whole, frac = divmod(n, unit)
    if not frac:
        return str(whole)
    digits = len(str(unit)) - 1
    return f"{whole}.{frac:0{digits}d}".rstrip("0")


def _duration(d: Duration) -> Optional[str]:
    if d is None or d == "":
        return None
    if isinstance(d, timedelta):
        return None if not d else go_duration(d)
    return str(d)


def _moment(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError("ductor: a moment must be timezone-aware")
    s = t.astimezone(timezone.utc).isoformat()
    return s.replace("+00:00", "Z")


def _zero(v: Any) -> bool:
    return v is None or v is False or v == "" or v == 0 and not isinstance(v, bool) or (
        isinstance(v, (list, tuple, dict)) and len(v) == 0
    )


def to_value(v: Any) -> Any:
    """Turns settings into their JSON value: dataclasses by field name,
    zero fields left out, durations and moments as strings."""
    if isinstance(v, timedelta):
        return _duration(v)
    if isinstance(v, datetime):
        return _moment(v)
    if hasattr(v, "to_dict"):
        return v.to_dict()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return fields_of(v)
    if isinstance(v, Mapping):
        return {str(k): to_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_value(x) for x in v]
    return v


def fields_of(v: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """A dataclass's non-zero fields by their document names (a trailing
    underscore dropped: ``with_`` is ``with``)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(v):
        value = getattr(v, f.name)
        if f.name not in skip and not _zero(value):
            out[f.metadata.get("json", f.name.rstrip("_"))] = to_value(value)
    return out


@dataclass
class Retry:
    """Overrides parts of a task or http step's retry policy; zero fields
    keep the defaults (3 attempts, 1s, ×2, at most 1m, jitter)."""

    max_attempts: int = 0
    initial_interval: Duration = None
    backoff_coefficient: float = 0
    max_interval: Duration = None
    #: when not None, turns jitter on or off.
    jitter: Optional[bool] = None

    def to_dict(self) -> dict[str, Any]:
        out = fields_of(self, skip=("jitter",))
        if self.jitter is not None:
            out["jitter"] = self.jitter
        return out


@dataclass
class Step:
    """One step of a definition. Build one with the step builders
    (:func:`task_step`, :func:`http_step`, …) and refine it with its
    methods, which each return a changed copy."""

    ref: str
    type: str
    name: str = ""
    #: the type's settings: a settings dataclass (TaskWith, …) or a mapping.
    with_: Any = None
    run_if: str = ""
    for_each: str = ""
    join: Any = ""
    on_error: str = ""
    end_run: str = ""
    retry: Optional[Retry] = None
    timeout: Duration = None
    concurrency: Optional[Mapping[str, Any]] = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ref": self.ref, "type": self.type}
        out.update(fields_of(self, skip=("ref", "type")))
        if not out.get("with"):
            out.pop("with", None)
        return out

    def named(self, name: str) -> Step:
        """A label for the dashboard."""
        return dataclasses.replace(self, name=name)

    def only_if(self, expr: str) -> Step:
        """Run only when the expression holds (``run_if``; else skipped)."""
        return dataclasses.replace(self, run_if=expr)

    def each(self, list_expr: str) -> Step:
        """Run once per element of the list (``for_each``; task, http, transform)."""
        return dataclasses.replace(self, for_each=list_expr)

    def join_any(self) -> Step:
        """Ready as soon as one incoming edge fires."""
        return dataclasses.replace(self, join="any")

    def continue_on_error(self) -> Step:
        """A failure fires the error and done edges instead of failing the run."""
        return dataclasses.replace(self, on_error="continue")

    def with_retry(self, retry: Retry) -> Step:
        """A retry policy (task and http steps)."""
        return dataclasses.replace(self, retry=retry)

    def with_timeout(self, d: Duration) -> Step:
        """A per-attempt timeout (task and http steps)."""
        return dataclasses.replace(self, timeout=d)

    def set(self, key: str, value: Any) -> Step:
        """One setting of ``with`` set or replaced, for a setting the typed
        settings lack."""
        w = dict(to_value(self.with_) or {})
        w[key] = to_value(value)
        return dataclasses.replace(self, with_=w)


@dataclass
class Choice:
    """One branch of a choice group."""

    to: str
    when: str = ""
    default: bool = False


@dataclass
class Edge:
    """An edge, or with ``choice`` a choice group."""

    from_: str = field(metadata={"json": "from"})
    to: str = ""
    on: str = ""
    choice: list[Choice] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.from_}
        for k in ("to", "on"):
            if getattr(self, k):
                out[k] = getattr(self, k)
        if self.choice:
            out["choice"] = [to_value(c) for c in self.choice]
        return out


def then(from_: str, to: str) -> Edge:
    """A success edge."""
    return Edge(from_, to)


def on(from_: str, to: str, outcome: str) -> Edge:
    """An edge firing on outcome (see :class:`Outcome`)."""
    return Edge(from_, to, on=outcome)


def choose(from_: str, *branches: Choice) -> Edge:
    """A choice group: branches in order, the last one a default."""
    return Edge(from_, choice=list(branches))


def when(cond: str, to: str) -> Choice:
    """A choice branch taken when cond holds."""
    return Choice(to=to, when=cond)


def otherwise(to: str) -> Choice:
    """A choice group's default branch."""
    return Choice(to=to, default=True)


@dataclass
class Limits:
    """Lowers the server's limits for one definition; zero fields keep the
    server's."""

    max_inline_children: int = 0
    transitions_soft: int = 0
    transitions_hard: int = 0
    transitions_terminate: int = 0


@dataclass
class Definition:
    """A workflow definition document."""

    key: str
    steps: list[Step] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    name: str = ""
    description: str = ""
    #: a JSON Schema (2020-12) the trigger input must match.
    input_schema: Any = None
    #: the run's output (default: the sink steps' outputs by ref).
    output_expr: str = ""
    timeout: Duration = None
    limits: Optional[Limits] = None

    def to_dict(self) -> dict[str, Any]:
        """The document as JSON values."""
        out: dict[str, Any] = {"key": self.key}
        out.update(fields_of(self, skip=("key", "steps", "edges")))
        out["steps"] = [s.to_dict() for s in self.steps]
        if self.edges:
            out["edges"] = [e.to_dict() for e in self.edges]
        return out

    def to_json(self, indent: Optional[int] = None) -> str:
        """The document as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    def validate(self) -> None:
        """Raises ValueError for the mistakes the SDK can see without the
        server: a missing key, steps without a ref or type. The server's
        compiler checks everything (Client.compile, Client.publish)."""
        if not self.key:
            raise ValueError("ductor: definition has no key")
        if not self.steps:
            raise ValueError(f"ductor: definition {self.key} has no steps")
        for i, s in enumerate(self.steps):
            if not s.ref or not s.type:
                raise ValueError(f"ductor: definition {self.key}: steps[{i}] needs a ref and a type")
