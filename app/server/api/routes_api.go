package api

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/tenantsecrets"
	"github.com/ductor/ductor/app/usage"
)

// Deps is what the API's handlers take from the process.
type Deps struct {
	Store *store.Store
	// Runs starts runs and delivers controls to them.
	Runs *runs.Service
	// ValidateInput checks trigger input against a definition's schema.
	ValidateInput runs.InputValidator
	Logger        *slog.Logger
	// Secrets seals webhook secrets; nil when none is configured, and
	// then webhooks answer 503.
	Secrets *secrets.Box
	// BaseURL is the public URL webhook addresses are given under.
	BaseURL string
	// TrustedProxies, AuthFailuresPerMinute and AuthFailureBurst bound
	// failed webhook deliveries per client address, as for API keys.
	TrustedProxies        []netip.Prefix
	AuthFailuresPerMinute float64
	AuthFailureBurst      int
	// WebhookRefusedEvery is how often, at most, one webhook's refused
	// deliveries are reported by a ductor.webhook.refused event
	// (0: DefaultWebhookRefusedEvery).
	WebhookRefusedEvery time.Duration
	// Subscriptions are the outbound webhook subscriptions (nil: their
	// routes answer 503).
	Subscriptions *subscriptions.Service
	// Stopping is closed when the server starts shutting down: long polls
	// answer at once instead of holding the shutdown up.
	Stopping <-chan struct{}
	// Usage reads the tenant's metered use and quota state.
	Usage *usage.Service
}

// Routes lists the JSON API under /api/v1; every route is authenticated
// by an API key and confined to the key's tenant.
func Routes(api *echo.Group, d Deps) {
	api.GET("/whoami", handleWhoami(d.Usage))
	api.GET("/usage", handleUsage(d.Usage), httpx.RequireScope(auth.ScopeUsageRead), httpx.AllowQuery("from", "to", "group_by"))
	waitingRoutes(api, d)
	taskRoutes(api, d)
	scheduleRoutes(api, d)
	webhookRoutes(api, d)
	upgradeRoutes(api, d)
	secretRoutes(api, d)
	subscriptionRoutes(api, d)

	read, write := httpx.RequireScope(auth.ScopeRunsRead), httpx.RequireScope(auth.ScopeRunsWrite)
	api.POST("/runs", handleRunStart(d.Runs, d.ValidateInput), write)
	api.GET("/runs", handleRunList(d.Store), read, httpx.AllowQuery(httpx.RunListParams...))
	api.GET("/runs/:id", handleRunGet(d.Store, d.Runs), read)
	api.GET("/runs/:id/history", handleRunHistory(d.Store), read, httpx.AllowQuery(httpx.HistoryParams...))
	api.GET("/runs/:id/nodes/:node/children", handleScatterChildren(d.Store, d.Runs), read, httpx.AllowQuery(httpx.ChildrenParams...))
	api.POST("/runs/batch", handleBatchCreate(d.Store, d.Runs), write, httpx.AllowQuery("dry_run"))
	api.GET("/batches/:id", handleBatchGet(d.Store), read)
	api.POST("/batches/:id/stop", handleBatchStop(d.Runs), write)
	api.POST("/runs/:id/cancel", handleRunCancel(d.Runs), write)
	api.POST("/runs/:id/nodes/:node/retry", handleNodeRetry(d.Runs), write, httpx.AllowQuery("dry_run"))
	api.POST("/runs/:id/nodes/:node/cancel", handleNodeCancel(d.Runs), write)
	api.POST("/runs/:id/continue-as-new", handleContinueAsNew(d.Runs), write)

	defRead, defWrite := httpx.RequireScope(auth.ScopeDefinitionsRead), httpx.RequireScope(auth.ScopeDefinitionsWrite)
	api.POST("/compile", handleCompile(), defRead)
	api.GET("/definitions", handleDefinitionList(d.Store), defRead, httpx.AllowQuery(httpx.KeyedListParams...))
	api.GET("/definitions/:key", handleDefinitionGet(d.Store), defRead)
	api.PUT("/definitions/:key", handleDraftSave(d.Store), defWrite)
	api.POST("/definitions/:key/versions", handlePublish(d.Store), defWrite)
	api.GET("/definitions/:key/versions/:n", handleVersionGet(d.Store), defRead)
	api.DELETE("/definitions/:key/versions/:n", handleVersionUnpublish(d.Store), defWrite)
}

// waitingRoutes lists what wakes waiting runs: signals, events, approval
// decisions and case updates.
func waitingRoutes(api *echo.Group, d Deps) {
	api.POST("/runs/:id/signals", handleSignal(d.Runs), httpx.RequireScope(auth.ScopeSignalsWrite))
	api.POST("/events", handleEvent(d.Runs), httpx.RequireScope(auth.ScopeEventsWrite))
	approvals := httpx.RequireScope(auth.ScopeApprovalsWrite)
	api.GET("/approvals", handleApprovalList(d.Store), approvals, httpx.AllowQuery(httpx.ApprovalParams...))
	api.GET("/approvals/:id", handleApprovalGet(d.Store), approvals)
	api.POST("/approvals/:id/decision", handleApprovalDecision(d.Runs), approvals)
	api.GET("/cases", handleCaseList(d.Store), approvals, httpx.AllowQuery(httpx.CaseListParams...))
	api.GET("/cases/:id", handleCaseGet(d.Store), approvals)
	api.PATCH("/cases/:id", handleCaseUpdate(d.Runs), approvals)
}

// taskRoutes lists what bridge-SDK workers call: a long poll that claims
// tasks, then a result or heartbeats for each under its token.
func taskRoutes(api *echo.Group, d Deps) {
	work := []echo.MiddlewareFunc{httpx.RequireScope(auth.ScopeTasksWork), httpx.BodyLimit(MaxTaskBodyBytes)}
	vault := tenantsecrets.New(tenantsecrets.Config{Store: d.Store, Box: d.Secrets})
	api.POST("/tasks/poll", handleTaskPoll(d.Runs, vault, d.Stopping), work...)
	api.POST("/tasks/:id/complete", handleTaskComplete(d.Runs), work...)
	api.POST("/tasks/:id/fail", handleTaskFail(d.Runs), work...)
	api.POST("/tasks/:id/heartbeat", handleTaskHeartbeat(d.Runs), work...)
}

// scheduleRoutes lists the schedules API. What can make a schedule start
// runs (creating one, changing or unpausing it, triggering, backfilling)
// needs runs:write as well: schedules:write alone is no way to start runs.
func scheduleRoutes(api *echo.Group, d Deps) {
	read, write := httpx.RequireScope(auth.ScopeSchedulesRead), httpx.RequireScope(auth.ScopeSchedulesWrite)
	starts := httpx.RequireScope(auth.ScopeRunsWrite)
	api.POST("/schedules", handleScheduleCreate(d.Store, d.Runs, d.ValidateInput), write, starts)
	api.GET("/schedules", handleScheduleList(d.Store), read, httpx.AllowQuery(httpx.KeyedListParams...))
	api.GET("/schedules/:id", handleScheduleGet(d.Store), read)
	api.PATCH("/schedules/:id", handleScheduleUpdate(d.Store, d.Runs, d.ValidateInput), write, starts)
	api.DELETE("/schedules/:id", handleScheduleDelete(d.Store), write)
	api.POST("/schedules/:id/trigger", handleScheduleTrigger(d.Store, d.Runs), write, starts)
	api.POST("/schedules/:id/backfill", handleScheduleBackfill(d.Store, d.Runs), write, starts)
}

// webhookRoutes lists the webhooks API; deliveries arrive on /hooks (see
// hooks.go), outside it. A webhook's secret publishes its event, so
// minting one (creating or rotating) needs events:write as well.
func webhookRoutes(api *echo.Group, d Deps) {
	read, write := httpx.RequireScope(auth.ScopeWebhooksRead), httpx.RequireScope(auth.ScopeWebhooksWrite)
	publishes := httpx.RequireScope(auth.ScopeEventsWrite)
	api.POST("/webhooks", handleWebhookCreate(d.Store, d.Secrets, d.BaseURL), write, publishes)
	api.GET("/webhooks", handleWebhookList(d.Store, d.BaseURL), read, httpx.AllowQuery(httpx.KeyedListParams...))
	api.GET("/webhooks/:id", handleWebhookGet(d.Store, d.BaseURL), read)
	api.GET("/webhooks/:id/deliveries", handleWebhookDeliveries(d.Store), read, httpx.AllowQuery("limit", "result"))
	api.POST("/webhooks/:id/rotate", handleWebhookRotate(d.Store, d.Secrets, d.BaseURL), write, publishes)
	api.DELETE("/webhooks/:id", handleWebhookDelete(d.Store), write)
}

// subscriptionRoutes lists the outbound webhook subscriptions API, under
// the webhooks scopes.
func subscriptionRoutes(api *echo.Group, d Deps) {
	read, write := httpx.RequireScope(auth.ScopeWebhooksRead), httpx.RequireScope(auth.ScopeWebhooksWrite)
	svc := d.Subscriptions
	api.POST("/subscriptions", handleSubscriptionCreate(svc), write)
	api.GET("/subscriptions", handleSubscriptionList(svc), read, httpx.AllowQuery("limit"))
	api.GET("/subscriptions/:id", handleSubscriptionGet(svc), read)
	api.DELETE("/subscriptions/:id", handleSubscriptionDelete(svc), write)
	api.POST("/subscriptions/:id/rotate", handleSubscriptionRotate(svc), write)
	api.POST("/subscriptions/:id/enable", handleSubscriptionEnable(svc), write)
	api.GET("/subscriptions/:id/deliveries", handleSubscriptionDeliveries(svc), read, httpx.AllowQuery("limit"))
	api.POST("/subscriptions/:id/deliveries/:delivery/redeliver", handleSubscriptionRedeliver(svc), write)
}

// secretRoutes lists the tenant secrets API: values are write-only; no
// scope reads one back.
func secretRoutes(api *echo.Group, d Deps) {
	svc := tenantsecrets.New(tenantsecrets.Config{Store: d.Store, Box: d.Secrets})
	read, write := httpx.RequireScope(auth.ScopeSecretsRead), httpx.RequireScope(auth.ScopeSecretsWrite)
	api.GET("/secrets", handleSecretList(svc), read, httpx.AllowQuery(httpx.KeyedListParams...))
	api.GET("/secrets/:name", handleSecretGet(svc), read)
	api.PUT("/secrets/:name", handleSecretPut(svc), write, httpx.BodyLimit(MaxSecretBodyBytes))
	api.DELETE("/secrets/:name", handleSecretDelete(svc), write)
}

// upgradeRoutes lists moving runs to another version of their
// definition (docs/upgrades.md): an upgrade and a retry on a version,
// each with a dry run.
func upgradeRoutes(api *echo.Group, d Deps) {
	write := httpx.RequireScope(auth.ScopeRunsWrite)
	api.POST("/runs/:id/upgrade", handleRunUpgrade(d.Runs), write, httpx.AllowQuery("dry_run"))
	api.POST("/runs/:id/retry", handleRunRetry(d.Runs), write, httpx.AllowQuery("dry_run"))
}
