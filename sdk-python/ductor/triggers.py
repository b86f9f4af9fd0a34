"""Schedules and webhooks: what starts runs without a caller (see
docs/triggers.md). Client.triggers is the way in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from .models import Webhook, WebhookDelivery, from_dict
from .transport import esc as _esc
from .transport import query as _query

if TYPE_CHECKING:
    from .client import Client


class Triggers:
    """The tenant's schedules and webhooks (Client.triggers)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create_schedule(self, schedule: Mapping[str, Any]) -> Any:
        """Creates a schedule ({"definition", "spec": {"cron"|"interval", …}, …})."""
        return self._c._call("POST", "/schedules", dict(schedule))[1]

    def list_schedules(self, limit: int = 0, cursor: str = "") -> Any:
        return self._c._get("/schedules" + _query(limit=limit, cursor=cursor))

    def get_schedule(self, schedule_id: str) -> Any:
        return self._c._get(f"/schedules/{_esc(schedule_id)}")

    def update_schedule(self, schedule_id: str, patch: Mapping[str, Any]) -> Any:
        """Changes the fields patch holds ("paused", "note", "spec", …)."""
        return self._c._call("PATCH", f"/schedules/{_esc(schedule_id)}", dict(patch))[1]

    def pause_schedule(self, schedule_id: str, pause: bool = True, note: str = "") -> Any:
        return self.update_schedule(schedule_id, {"paused": pause, "note": note})

    def delete_schedule(self, schedule_id: str) -> None:
        self._c._call("DELETE", f"/schedules/{_esc(schedule_id)}")

    def trigger_schedule(self, schedule_id: str, overlap: str = "") -> Any:
        body = {"overlap": overlap} if overlap else {}
        return self._c._call("POST", f"/schedules/{_esc(schedule_id)}/trigger", body)[1]

    def backfill_schedule(self, schedule_id: str, from_: str, to: str, overlap: str = "") -> Any:
        """Starts the runs the schedule would have started from from_
        (included) to to (excluded), both RFC 3339."""
        body = {"from": from_, "to": to}
        if overlap:
            body["overlap"] = overlap
        return self._c._call("POST", f"/schedules/{_esc(schedule_id)}/backfill", body)[1]

    def create_webhook(self, webhook_id: str, event: str, scheme: str = "") -> Webhook:
        """Creates a webhook; the answer holds its secret, shown only then."""
        body = {"id": webhook_id, "event": event}
        if scheme:
            body["scheme"] = scheme
        return from_dict(Webhook, self._c._call("POST", "/webhooks", body)[1])

    def list_webhooks(self, limit: int = 0, cursor: str = "") -> list[Webhook]:
        out = self._c._get("/webhooks" + _query(limit=limit, cursor=cursor))
        return [from_dict(Webhook, w) for w in out.get("webhooks") or []]

    def get_webhook(self, webhook_id: str) -> Webhook:
        return from_dict(Webhook, self._c._get(f"/webhooks/{_esc(webhook_id)}"))

    def webhook_deliveries(self, webhook_id: str, result: str = "", limit: int = 0) -> list[WebhookDelivery]:
        """The webhook's delivery log, newest first: only the "accepted" or
        only the "refused" results when result is given. It keeps each
        webhook's last 100 accepted and last 100 refused results."""
        out = self._c._get(f"/webhooks/{_esc(webhook_id)}/deliveries" + _query(limit=limit, result=result))
        return [from_dict(WebhookDelivery, d) for d in out.get("deliveries") or []]

    def rotate_webhook(self, webhook_id: str) -> Webhook:
        return from_dict(Webhook, self._c._call("POST", f"/webhooks/{_esc(webhook_id)}/rotate")[1])

    def delete_webhook(self, webhook_id: str) -> None:
        self._c._call("DELETE", f"/webhooks/{_esc(webhook_id)}")
