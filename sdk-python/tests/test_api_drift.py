"""The SDK against the OpenAPI document the server serves: a method for
every operation, and no field the server does not have."""

from __future__ import annotations

import dataclasses
import unittest
from typing import Any

import ductor
from ductor import Client, Worker
from ductor.subscriptions import Subscriptions
from ductor.triggers import Triggers

from support import client, live

# Each operation of the API and the method that calls it.
OPERATIONS = {
    "whoami": Client.whoami, "getOpenAPI": Client.openapi, "getDefinitionSchema": Client.definition_schema,
    "compile": Client.compile, "listDefinitions": Client.list_definitions, "getDefinition": Client.get_definition,
    "saveDraft": Client.save_draft, "publish": Client.publish, "getVersion": Client.get_version,
    "unpublishVersion": Client.unpublish,
    "startRun": Client.start_run, "listRuns": Client.list_runs, "getRun": Client.get_run,
    "getRunHistory": Client.run_history, "cancelRun": Client.cancel_run, "continueAsNew": Client.continue_as_new,
    "cancelNode": Client.cancel_node, "retryNode": Client.retry_node, "listScatterChildren": Client.scatter_children,
    "upgradeRun": Client.upgrade_run, "retryRun": Client.retry_run,
    "createBatch": Client.create_batch, "getBatch": Client.get_batch,
    "stopBatch": Client.stop_batch,
    "signalRun": Client.signal, "publishEvent": Client.publish_event,
    "listApprovals": Client.list_approvals, "getApproval": Client.get_approval, "decideApproval": Client.decide_approval,
    "listCases": Client.list_cases, "getCase": Client.get_case, "updateCase": Client.update_case,
    "listSchedules": Triggers.list_schedules, "createSchedule": Triggers.create_schedule,
    "getSchedule": Triggers.get_schedule, "updateSchedule": Triggers.update_schedule,
    "deleteSchedule": Triggers.delete_schedule, "backfillSchedule": Triggers.backfill_schedule,
    "triggerSchedule": Triggers.trigger_schedule,
    "listWebhooks": Triggers.list_webhooks, "createWebhook": Triggers.create_webhook, "getWebhook": Triggers.get_webhook,
    "deleteWebhook": Triggers.delete_webhook, "rotateWebhook": Triggers.rotate_webhook,
    "listWebhookDeliveries": Triggers.webhook_deliveries,
    "putSecret": Client.put_secret, "listSecrets": Client.list_secrets, "getSecret": Client.get_secret,
    "deleteSecret": Client.delete_secret, "getUsage": Client.get_usage,
    "createSubscription": Subscriptions.create_subscription, "listSubscriptions": Subscriptions.list_subscriptions,
    "getSubscription": Subscriptions.get_subscription, "deleteSubscription": Subscriptions.delete_subscription,
    "rotateSubscription": Subscriptions.rotate_subscription, "enableSubscription": Subscriptions.enable_subscription,
    "listSubscriptionDeliveries": Subscriptions.list_deliveries,
    "redeliverSubscriptionDelivery": Subscriptions.redeliver,
    # The bridge protocol, spoken by workers.
    "pollTasks": Worker._poll, "completeTask": Worker._report, "failTask": Worker._report,
    "heartbeatTask": Worker._heartbeat,
}

# Each answer's dataclass and the schemas it reads.
MODELS = {
    ductor.Whoami: "Whoami", ductor.Version: "Published", ductor.Compiled: "Compiled", ductor.Started: "RunStarted",
    ductor.Run: "Run", ductor.Node: "Node", ductor.RunError: "RunError", ductor.Waiting: "Waiting",
    ductor.Transition: "Transition", ductor.DefinitionInfo: "Definition", ductor.VersionInfo: "Version",
    ductor.Approval: "Approval", ductor.Case: "Case CaseSummary", ductor.Webhook: "Webhook", ductor.Task: "Task",
    ductor.Upgrade: "UpgradeResult", ductor.Secret: "Secret", ductor.UsageReport: "UsageReport",
    ductor.Subscription: "Subscription", ductor.Delivery: "SubscriptionDelivery",
    ductor.WebhookDelivery: "WebhookDelivery",
}

# Fields of the SDK's own: not in any answer.
OWN = {"raw", "created", "existing", "received",
       "secrets"}  # Task.secrets: the hook for tenant secrets, which the server does not send yet


def wire_name(f: dataclasses.Field[Any]) -> str:
    return f.name.rstrip("_")


@live
class APIDriftTest(unittest.TestCase):
    doc: dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.doc = client().openapi()

    def test_every_operation_has_a_method(self) -> None:
        served = {op["operationId"] for ops in self.doc["paths"].values() for op in ops.values()
                  if isinstance(op, dict) and "operationId" in op}
        self.assertEqual(sorted(served - OPERATIONS.keys()), [], "operations the SDK has no method for")
        self.assertEqual(sorted(OPERATIONS.keys() - served), [], "methods for operations the server lacks")

    def test_every_field_is_the_servers(self) -> None:
        schemas = self.doc["components"]["schemas"]
        for cls, name in MODELS.items():
            props = {p for n in name.split() for p in schemas[n]["properties"]}
            for f in dataclasses.fields(cls):
                if f.name not in OWN:
                    self.assertIn(wire_name(f), props, f"{cls.__name__}.{f.name} is not in the {name} schema")


if __name__ == "__main__":
    unittest.main()
