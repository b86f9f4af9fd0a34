package e2e

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/server"
	"github.com/ductor/ductor/sdk"
)

// sdkMethods names the SDK's method for each operation of the served
// OpenAPI document, as TYPE.METHOD.
var sdkMethods = map[string]string{
	"getOpenAPI":                    "", // the document itself: for generators, not for clients
	"getDefinitionSchema":           "Client.DefinitionSchema",
	"whoami":                        "Client.Whoami",
	"startRun":                      "Client.StartRun",
	"listRuns":                      "Client.ListRuns",
	"createBatch":                   "Client.CancelRuns", // and Client.RetryRuns
	"getRun":                        "Client.GetRun",
	"getRunHistory":                 "Client.RunHistory",
	"listScatterChildren":           "Client.ScatterChildren",
	"cancelRun":                     "Client.CancelRun",
	"retryNode":                     "Client.RetryNode",
	"cancelNode":                    "Client.CancelNode",
	"continueAsNew":                 "Client.ContinueAsNew",
	"signalRun":                     "Client.Signal",
	"getBatch":                      "Client.GetBatch",
	"stopBatch":                     "Client.StopBatch",
	"publishEvent":                  "Client.PublishEvent",
	"listApprovals":                 "Client.ListApprovals",
	"getApproval":                   "Client.GetApproval",
	"decideApproval":                "Client.DecideApproval",
	"listCases":                     "Client.ListCases",
	"getCase":                       "Client.GetCase",
	"updateCase":                    "Client.UpdateCase",
	"compile":                       "Client.Compile",
	"listDefinitions":               "Client.ListDefinitions",
	"getDefinition":                 "Client.GetDefinition",
	"saveDraft":                     "Client.SaveDraft",
	"publish":                       "Client.Publish",
	"getVersion":                    "Client.GetVersion",
	"unpublishVersion":              "Client.Unpublish",
	"pollTasks":                     "Worker.Run", // a worker polls, heartbeats and reports
	"completeTask":                  "Worker.Run",
	"failTask":                      "Worker.Run",
	"heartbeatTask":                 "Worker.Run",
	"createSchedule":                "Triggers.CreateSchedule",
	"listSchedules":                 "Triggers.ListSchedules",
	"getSchedule":                   "Triggers.GetSchedule",
	"updateSchedule":                "Triggers.UpdateSchedule",
	"deleteSchedule":                "Triggers.DeleteSchedule",
	"triggerSchedule":               "Triggers.TriggerSchedule",
	"backfillSchedule":              "Triggers.BackfillSchedule",
	"createWebhook":                 "Triggers.CreateWebhook",
	"listWebhooks":                  "Triggers.ListWebhooks",
	"getWebhook":                    "Triggers.GetWebhook",
	"deleteWebhook":                 "Triggers.DeleteWebhook",
	"rotateWebhook":                 "Triggers.RotateWebhook",
	"listWebhookDeliveries":         "Triggers.WebhookDeliveries",
	"upgradeRun":                    "Client.UpgradeRun",
	"retryRun":                      "Client.RetryRun",
	"putSecret":                     "Tenant.PutSecret",
	"listSecrets":                   "Tenant.ListSecrets",
	"getSecret":                     "Tenant.GetSecret",
	"deleteSecret":                  "Tenant.DeleteSecret",
	"getUsage":                      "Tenant.Usage",
	"createSubscription":            "Tenant.CreateSubscription",
	"listSubscriptions":             "Tenant.ListSubscriptions",
	"getSubscription":               "Tenant.GetSubscription",
	"deleteSubscription":            "Tenant.DeleteSubscription",
	"rotateSubscription":            "Tenant.RotateSubscription",
	"enableSubscription":            "Tenant.EnableSubscription",
	"listSubscriptionDeliveries":    "Tenant.SubscriptionDeliveries",
	"redeliverSubscriptionDelivery": "Tenant.Redeliver",
}

// The SDK has a method for every operation of the API the server
// documents, as docs/sdk.md says.
func TestSDKHasAMethodForEveryOperation(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server.New(server.Deps{API: true, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	types := map[string]reflect.Type{
		"Client": reflect.TypeOf(&sdk.Client{}), "Triggers": reflect.TypeOf(&sdk.Triggers{}), "Worker": reflect.TypeOf(&sdk.Worker{}),
		"Tenant": reflect.TypeOf(&sdk.Tenant{}),
	}
	var ops []string
	for path, methods := range doc.Paths {
		for verb, op := range methods {
			ops = append(ops, op.OperationID)
			method, ok := sdkMethods[op.OperationID]
			if !ok {
				t.Errorf("%s %s (%s) has no SDK method", strings.ToUpper(verb), path, op.OperationID)
				continue
			}
			if typ, name, _ := strings.Cut(method, "."); method != "" {
				if _, found := types[typ].MethodByName(name); types[typ] == nil || !found {
					t.Errorf("%s: the SDK has no %s", op.OperationID, method)
				}
			}
		}
	}
	sort.Strings(ops)
	for op := range sdkMethods {
		if _, found := sort.Find(len(ops), func(i int) int { return strings.Compare(op, ops[i]) }); !found {
			t.Errorf("sdkMethods names %s, which the API does not have", op)
		}
	}
}
