"""A client for every operation of Ductor's HTTP API."""

from __future__ import annotations

import os
import time
from datetime import date
from typing import Any, Mapping, Optional, Union
from urllib.parse import urlencode

from .definition import Definition
from .errors import DuctorError
from .models import (
    Approval,
    Case,
    Compiled,
    DefinitionInfo,
    DefinitionPage,
    Run,
    RunPage,
    Secret,
    SecretPage,
    Started,
    Transition,
    Upgrade,
    UsageReport,
    Version,
    VersionInfo,
    Whoami,
    from_dict,
)
from .transport import Transport
from .transport import esc as _esc
from .transport import query as _query
from .subscriptions import Subscriptions
from .triggers import Triggers

#: Where a client connects when no URL is given: ``ductor dev``.
DEFAULT_URL = "http://127.0.0.1:8080"

Document = Union[Definition, Mapping[str, Any]]


def _dry(dry_run: bool) -> str:
    return "?dry_run=true" if dry_run else ""


def _day(d: Union[date, str, None]) -> str:
    return d.isoformat() if isinstance(d, date) else (d or "")


def _doc(d: Document) -> Any:
    if isinstance(d, Definition):
        d.validate()
        return d.to_dict()
    if not d.get("key"):
        raise ValueError("ductor: definition has no key")
    return dict(d)


class Client:
    """Calls one Ductor server's API with one API key. Safe to share
    between threads.

    ``base_url`` defaults to DEFAULT_URL; ``timeout`` bounds each call
    except a worker's long polls, which wait longer."""

    def __init__(self, base_url: str = "", api_key: str = "", *, timeout: float = 60.0) -> None:
        if not api_key.startswith("dk_") or any(c.isspace() for c in api_key):
            raise ValueError("ductor: the API key must be a Ductor key (dk_…): "
                             "`ductor dev` prints one, `ductor apikey create` makes one")
        self._t = Transport(base_url or DEFAULT_URL, api_key, timeout)

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **kwargs: Any) -> Client:
        """A client of DUCTOR_URL (default DEFAULT_URL) with DUCTOR_API_KEY."""
        env = os.environ if environ is None else environ
        return cls(env.get("DUCTOR_URL", ""), env.get("DUCTOR_API_KEY", ""), **kwargs)

    def _call(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return self._t.call(method, path, body, **kw)

    def _get(self, path: str) -> Any:
        return self._call("GET", path)[1]

    @property
    def triggers(self) -> Triggers:
        """The tenant's schedules and webhooks: what starts runs by itself."""
        return Triggers(self)

    @property
    def subscriptions(self) -> Subscriptions:
        """The tenant's event subscriptions: where its events are posted."""
        return Subscriptions(self)

    # The key.

    def whoami(self) -> Whoami:
        """Which tenant the key acts for, and its scopes."""
        return from_dict(Whoami, self._get("/whoami"))

    # Definitions.

    def publish(self, d: Document) -> Version:
        """Compiles d on the server and publishes it as the next version of
        its key; an unchanged document answers its existing version. An
        invalid one raises APIError 422 listing every problem in details."""
        doc = _doc(d)
        status, out = self._call("POST", f"/definitions/{_esc(doc['key'])}/versions", doc)
        v = from_dict(Version, out)
        v.created = status == 201
        return v

    def compile(self, d: Union[Document, str], *, yaml: bool = False) -> Compiled:
        """Compiles a document without storing anything: a Definition, a
        mapping, or JSON or (yaml=True) YAML text."""
        if isinstance(d, str):
            ctype = "application/yaml" if yaml else "application/json"
            _, out = self._call("POST", "/compile", raw=d.encode(), content_type=ctype)
        else:
            _, out = self._call("POST", "/compile", _doc(d))
        return from_dict(Compiled, out)

    def save_draft(self, d: Document) -> None:
        """Saves d as its key's draft (publish it later with publish_draft)."""
        doc = _doc(d)
        self._call("PUT", f"/definitions/{_esc(doc['key'])}", doc)

    def publish_draft(self, key: str) -> Version:
        """Publishes key's draft as its next version."""
        status, out = self._call("POST", f"/definitions/{_esc(key)}/versions")
        v = from_dict(Version, out)
        v.created = status == 201
        return v

    def list_definitions(self, limit: int = 0, cursor: str = "") -> DefinitionPage:
        """The tenant's definitions by key, a page at a time."""
        out = self._get("/definitions" + _query(limit=limit, cursor=cursor))
        return DefinitionPage([from_dict(DefinitionInfo, d) for d in out.get("definitions") or []],
                              out.get("next_cursor") or "")

    def get_definition(self, key: str) -> DefinitionInfo:
        """A definition with its versions."""
        return from_dict(DefinitionInfo, self._get(f"/definitions/{_esc(key)}"))

    def get_version(self, key: str, version: int) -> VersionInfo:
        """One version with its source and manifest."""
        return from_dict(VersionInfo, self._get(f"/definitions/{_esc(key)}/versions/{int(version)}"))

    def unpublish(self, key: str, version: int) -> None:
        """Unpublishes a version: its runs go on; new runs by key start the
        newest version still published."""
        self._call("DELETE", f"/definitions/{_esc(key)}/versions/{int(version)}")

    def openapi(self) -> Any:
        """The API's OpenAPI 3.1 document."""
        return self._get("/openapi.json")

    def definition_schema(self) -> Any:
        """The JSON Schema of definition documents."""
        return self._get("/schemas/definition.json")

    # Runs.

    def start_run(self, definition: str, input: Any = None, *, version: int = 0, subject: str = "",
                  context: Any = None, search_attributes: Optional[Mapping[str, Any]] = None,
                  idempotency_key: str = "") -> Started:
        """Starts a run of a published definition (version 0: the latest).
        A repeated start with the same idempotency_key answers the first
        run, with existing True."""
        body: dict[str, Any] = {"definition": definition}
        for k, v in (("version", version), ("subject", subject), ("idempotency_key", idempotency_key)):
            if v:
                body[k] = v
        for k, v in (("input", input), ("context", context), ("search_attributes", search_attributes)):
            if v is not None:
                body[k] = v
        status, out = self._call("POST", "/runs", body)
        s = from_dict(Started, out)
        s.existing = status == 200
        return s

    def get_run(self, run_id: str) -> Run:
        """A run with its nodes."""
        return Run.from_dict(self._get(f"/runs/{_esc(run_id)}"))

    def wait_run(self, run_id: str, timeout: float = 60.0, interval: float = 0.2) -> Run:
        """Reads the run every interval until it has ended; raises
        TimeoutError after timeout seconds."""
        end = time.monotonic() + timeout
        while True:
            r = self.get_run(run_id)
            if r.terminal:
                return r
            if time.monotonic() >= end:
                raise TimeoutError(f"ductor: run {run_id} is still {r.status} after {timeout}s")
            time.sleep(interval)

    def list_runs(self, *, status: str = "", definition: str = "", subject: str = "", parent_run_id: str = "",
                  attributes: Optional[Mapping[str, str]] = None, limit: int = 0, cursor: str = "") -> RunPage:
        """Runs, newest first, a page at a time: pass the page's
        next_cursor as cursor for the next one."""
        q = {k: v for k, v in (("status", status), ("definition", definition), ("subject", subject),
                               ("parent_run_id", parent_run_id), ("limit", limit), ("cursor", cursor)) if v}
        for k, v in (attributes or {}).items():
            q["attr." + k] = v
        out = self._get("/runs" + ("?" + urlencode(q) if q else ""))
        return RunPage([Run.from_dict(r) for r in out.get("runs") or []], out.get("next_cursor") or "")

    def run_history(self, run_id: str, after: int = 0, limit: int = 0) -> list[Transition]:
        """A run's transitions after seq after, oldest first."""
        out = self._get(f"/runs/{_esc(run_id)}/history" + _query(after=after, limit=limit))
        items = []
        for d in out.get("transitions") or []:
            t = from_dict(Transition, d)
            t.from_ = d.get("from", "")
            items.append(t)
        return items

    def cancel_run(self, run_id: str, reason: str = "") -> None:
        """Cancels a run and its sync children."""
        self._call("POST", f"/runs/{_esc(run_id)}/cancel", {"reason": reason})

    def cancel_node(self, run_id: str, node: str, reason: str = "") -> None:
        """Cancels one running or waiting node (a scatter child by its id, REF[KEY])."""
        self._call("POST", f"/runs/{_esc(run_id)}/nodes/{_esc(node)}/cancel", {"reason": reason})

    def retry_node(self, run_id: str, node: str, *, version: int = 0, cancel_removed: bool = False,
                   dry_run: bool = False) -> Optional[Upgrade]:
        """Retries a failed node and what follows it, keeping the outputs
        upstream, and resumes the run. With a version it is retry_run on
        that version, and returns the plan applied; with dry_run it only
        returns the plan."""
        body: dict[str, Any] = {}
        if version:
            body["version"] = version
        if cancel_removed:
            body["cancel_removed"] = True
        out = self._call("POST", f"/runs/{_esc(run_id)}/nodes/{_esc(node)}/retry{_dry(dry_run)}", body)[1]
        if not (version or dry_run):
            return None
        return from_dict(Upgrade, out if dry_run else out.get("upgrade"))

    def retry_run(self, run_id: str, node: str, *, version: int = 0, cancel_removed: bool = False,
                  dry_run: bool = False) -> Upgrade:
        """Retries a failed run from a failed (or cancelled) node, on
        version (0: the run's own), planned like an upgrade: the nodes
        before node keep their outputs. Returns the plan, applied unless
        dry_run; its reruns flag (fires_again) a side effect that already
        happened. A refused plan is APIError 422."""
        body: dict[str, Any] = {"node": node}
        if version:
            body["version"] = version
        if cancel_removed:
            body["cancel_removed"] = True
        out = self._call("POST", f"/runs/{_esc(run_id)}/retry{_dry(dry_run)}", body)[1]
        return from_dict(Upgrade, out if dry_run else out.get("upgrade"))

    def upgrade_run(self, run_id: str, version: int, *, cancel_removed: bool = False,
                    dry_run: bool = False) -> Upgrade:
        """Moves a run that has not ended to another published version
        of its definition (docs/upgrades.md); with dry_run, only plans it.
        cancel_removed allows removing steps whose nodes are running or
        waiting. A plan that cannot be applied safely is APIError 422
        (its refusals in details), a run that has ended APIError 409."""
        body: dict[str, Any] = {"version": int(version)}
        if cancel_removed:
            body["cancel_removed"] = True
        return from_dict(Upgrade, self._call("POST", f"/runs/{_esc(run_id)}/upgrade{_dry(dry_run)}", body)[1])

    def continue_as_new(self, run_id: str, request_id: str, input: Any = None) -> str:
        """Ends the run and starts its successor; returns the successor's id."""
        body: dict[str, Any] = {"request_id": request_id}
        if input is not None:
            body["input"] = input
        return self._call("POST", f"/runs/{_esc(run_id)}/continue-as-new", body)[1]["successor_run_id"]

    def scatter_children(self, run_id: str, node: str, state: str = "", q: str = "", limit: int = 0,
                         cursor: str = "") -> Any:
        """A page of a scatter node's children, as the API answers it."""
        return self._get(f"/runs/{_esc(run_id)}/nodes/{_esc(node)}/children"
                         + _query(state=state, q=q, limit=limit, cursor=cursor))

    def create_batch(self, action: str, *, run_ids: Optional[list[str]] = None,
                     filter: Optional[Mapping[str, Any]] = None, reason: str = "") -> Any:
        """Cancels or retries (action "cancel" or "retry") many runs in the
        background: those listed, or those a run filter selects
        ({"status", "definition", …}). Returns the batch; follow it with
        get_batch."""
        body: dict[str, Any] = {"action": action}
        if run_ids is not None:
            body["run_ids"] = list(run_ids)
        if filter is not None:
            body["filter"] = dict(filter)
        if reason:
            body["reason"] = reason
        return self._call("POST", "/runs/batch", body)[1]

    def get_batch(self, batch_id: str) -> Any:
        """A batch and its progress: done, failed and total."""
        return self._get(f"/batches/{_esc(batch_id)}")

    def stop_batch(self, batch_id: str) -> Any:
        """Stops a running batch where it stands and returns it, status
        "stopped", with the counts of what it did; the runs it had not
        reached are left as they are. One that has already ended raises
        an APIError with status 409."""
        return self._call("POST", f"/batches/{_esc(batch_id)}/stop")[1]

    # Waking runs.

    def signal(self, run_id: str, request_id: str, name: str, payload: Any = None) -> None:
        """Sends a signal; request_id deduplicates (a repeat is APIError 409)."""
        self._call("POST", f"/runs/{_esc(run_id)}/signals", {"request_id": request_id, "name": name, "payload": payload})

    def publish_event(self, name: str, data: Any = None, idempotency_key: str = "") -> str:
        """Stores an event for the runs waiting for its name; returns its id."""
        body: dict[str, Any] = {"name": name}
        if data is not None:
            body["data"] = data
        if idempotency_key:
            body["idempotency_key"] = idempotency_key
        return self._call("POST", "/events", body)[1]["id"]

    def list_approvals(self, status: str = "", limit: int = 0) -> list[Approval]:
        """Approvals with the status (pending, approved, rejected, closed; "" for all)."""
        out = self._get("/approvals" + _query(status=status, limit=limit))
        return [from_dict(Approval, a) for a in out.get("approvals") or []]

    def get_approval(self, approval_id: str) -> Approval:
        """One approval with its decisions."""
        return from_dict(Approval, self._get(f"/approvals/{_esc(approval_id)}"))

    def decide_approval(self, approval_id: str, approve: bool, comment: str = "") -> Approval:
        """Approves or rejects as the key; a decided approval is APIError 409."""
        body = {"decision": "approve" if approve else "reject", "comment": comment}
        return from_dict(Approval, self._call("POST", f"/approvals/{_esc(approval_id)}/decision", body)[1])

    def list_cases(self, status: str = "", limit: int = 0, *, with_data: bool = False) -> list[Case]:
        """Cases with the status ("" for all); their data only with with_data
        (each up to 64 KiB: a larger one is left out, truncated says "data")."""
        out = self._get("/cases" + _query(status=status, limit=limit, include="data" if with_data else ""))
        return [from_dict(Case, c) for c in out.get("cases") or []]

    def get_case(self, case_id: str) -> Case:
        """One case whole, with its data."""
        return from_dict(Case, self._get(f"/cases/{_esc(case_id)}"))

    def update_case(self, case_id: str, status: str = "", data: Any = None) -> Case:
        """Sets a case's status and data; the awaited status resumes its run."""
        if not status and data is None:
            raise DuctorError("ductor: a case update needs a status or data")
        body: dict[str, Any] = {}
        if status:
            body["status"] = status
        if data is not None:
            body["data"] = data
        return from_dict(Case, self._call("PATCH", f"/cases/{_esc(case_id)}", body)[1])

    # Tenant secrets.

    def put_secret(self, name: str, value: str, description: str = "") -> Secret:
        """Sets a tenant secret's value (creating it, created True, or
        rotating it); an empty description keeps the one it had. An http
        step sends it by name (auth, secret("NAME"); docs/secrets.md)."""
        body = {"value": value}
        if description:
            body["description"] = description
        status, out = self._call("PUT", f"/secrets/{_esc(name)}", body)
        sec = from_dict(Secret, out)
        sec.created = status == 201
        return sec

    def list_secrets(self, limit: int = 0, cursor: str = "") -> SecretPage:
        """The tenant's secrets' metadata by name, a page at a time."""
        out = self._get("/secrets" + _query(limit=limit, cursor=cursor))
        return SecretPage([from_dict(Secret, d) for d in out.get("secrets") or []], out.get("next_cursor") or "")

    def get_secret(self, name: str) -> Secret:
        """A secret's metadata: no call reads a value back."""
        return from_dict(Secret, self._get(f"/secrets/{_esc(name)}"))

    def delete_secret(self, name: str) -> None:
        self._call("DELETE", f"/secrets/{_esc(name)}")

    # Usage.

    def get_usage(self, from_: Union[date, str, None] = None, to: Union[date, str, None] = None,
                  group_by: str = "") -> UsageReport:
        """The tenant's metered use over UTC days from from_ (included) to
        to (excluded), the current month when left out, by group_by "day"
        (the default) or "definition", with its quotas now."""
        out = self._get("/usage" + _query(**{"from": _day(from_), "to": _day(to), "group_by": group_by}))
        u = from_dict(UsageReport, out)
        u.from_ = (out or {}).get("from", "")
        return u
