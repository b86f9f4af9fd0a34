"""Subscriptions: where the tenant's events are posted, signed, as they
happen (see docs/notifications.md). Client.subscriptions is the way in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from .models import Delivery, Subscription, from_dict
from .transport import esc as _esc
from .transport import query as _query

if TYPE_CHECKING:
    from .client import Client


class Subscriptions:
    """The tenant's event subscriptions and their delivery logs
    (Client.subscriptions)."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def create_subscription(self, url: str, events: Sequence[str], *, filter_expr: str = "",
                            description: str = "") -> Subscription:
        """Subscribes url to the events named (``["*"]`` for all), those
        whose data filter_expr accepts when given; the answer holds the
        signing secret, shown only then."""
        body = {"url": url, "events": list(events)}
        if filter_expr:
            body["filter_expr"] = filter_expr
        if description:
            body["description"] = description
        return from_dict(Subscription, self._c._call("POST", "/subscriptions", body)[1])

    def list_subscriptions(self, limit: int = 0) -> list[Subscription]:
        out = self._c._get("/subscriptions" + _query(limit=limit))
        return [from_dict(Subscription, s) for s in out.get("subscriptions") or []]

    def get_subscription(self, subscription_id: str) -> Subscription:
        return from_dict(Subscription, self._c._get(f"/subscriptions/{_esc(subscription_id)}"))

    def delete_subscription(self, subscription_id: str) -> None:
        """Deletes a subscription with its delivery log."""
        self._c._call("DELETE", f"/subscriptions/{_esc(subscription_id)}")

    def rotate_subscription(self, subscription_id: str) -> Subscription:
        """A new signing secret, in the answer only; the previous one still
        signs until previous_secret_until."""
        return from_dict(Subscription, self._c._call("POST", f"/subscriptions/{_esc(subscription_id)}/rotate")[1])

    def enable_subscription(self, subscription_id: str) -> Subscription:
        """Enables a subscription disabled after failures, forgetting them."""
        return from_dict(Subscription, self._c._call("POST", f"/subscriptions/{_esc(subscription_id)}/enable")[1])

    def list_deliveries(self, subscription_id: str, limit: int = 0) -> list[Delivery]:
        """The subscription's delivery log, each delivery with its attempts."""
        out = self._c._get(f"/subscriptions/{_esc(subscription_id)}/deliveries" + _query(limit=limit))
        return [from_dict(Delivery, d) for d in out.get("deliveries") or []]

    def redeliver(self, subscription_id: str, delivery_id: str) -> str:
        """Sends a delivered or failed delivery again; returns its status,
        "pending". One still in flight is APIError 409."""
        path = f"/subscriptions/{_esc(subscription_id)}/deliveries/{_esc(delivery_id)}/redeliver"
        return self._c._call("POST", path)[1]["status"]
