package pages

import (
	"strings"
	"time"

	"github.com/ductor/ductor/app/server/httpx"
	"github.com/ductor/ductor/app/tenantsecrets"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/login"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/subscriptions"
	"github.com/ductor/ductor/app/usage"
)

// Deps is what the dashboard's handlers take from the process.
type Deps struct {
	Store *store.Store
	// Runs starts runs and delivers controls to them.
	Runs *runs.Service
	// ValidateInput checks trigger input against a definition's schema.
	ValidateInput runs.InputValidator
	// Login is the OIDC provider people sign in with; nil when none is
	// configured.
	Login *login.Provider
	// DevLogin offers the clearly marked dev login.
	DevLogin bool
	// BaseURL is the dashboard's public URL; cookies are Secure when it
	// is https.
	BaseURL string
	// Secrets seals webhook secrets; nil when none is configured.
	Secrets *secrets.Box
	// Subscriptions are the outbound webhook subscriptions; nil: their
	// pages answer 503.
	Subscriptions *subscriptions.Service
	// LiveStreamFor bounds one live stream of the inspector (0: five
	// minutes).
	LiveStreamFor time.Duration
	// Stopping is closed when the server starts shutting down: live
	// streams end at once instead of holding the shutdown up.
	Stopping <-chan struct{}
	// Usage reads the tenant's metered use and quota state.
	Usage *usage.Service
}

func (d Deps) secureCookies() bool { return strings.HasPrefix(d.BaseURL, "https://") }

// Routes lists the dashboard's pages. Every route loads the session
// and refuses cross-site state changes; pages under /t/{tenant} also need
// a login and a membership of the tenant (or answer 404), and each names
// the permission its role check needs.
func Routes(e *echo.Echo, d Deps) {
	st := httpx.Site{DevLogin: d.DevLogin, SecureCookies: d.secureCookies()}
	web := []echo.MiddlewareFunc{httpx.BodyLimit(httpx.MaxFormBytes), httpx.LoadSession(d.Store, st), httpx.CSRFProtect}
	e.GET("/", handleHome(d.Store), web...)
	e.GET("/login", handleLoginPage(d.Login), web...)
	e.GET("/login/oidc", handleLoginStart(d.Store, d.Login), web...)
	e.GET("/auth/callback", handleLoginCallback(d.Store, d.Login), web...)
	e.POST("/login/dev", handleDevLogin(d.Store), web...)
	e.POST("/logout", handleLogout(d.Store, d.Login, d.BaseURL), web...)

	t := e.Group("/t/:tenant", append(web, httpx.RequireLogin, httpx.TenantAccess(d.Store))...)
	t.GET("", handleTenantHome(), httpx.Need(auth.PermView))
	t.GET("/definitions", handleDefinitions(d.Store), httpx.Need(auth.PermView))
	t.POST("/definitions", handleDefinitionCreate(d.Store), httpx.Need(auth.PermDefinitionsWrite))
	t.GET("/definitions/:key/edit", handleEditor(d.Store), httpx.Need(auth.PermView))
	t.GET("/definitions/:key/hints", handleEditorHints(d.Store), httpx.Need(auth.PermDefinitionsWrite))
	t.GET("/definitions/:key/diff", handleDefinitionDiff(d.Store), httpx.Need(auth.PermView))
	t.POST("/definitions/:key/runs", handleTestRun(d.Runs, d.ValidateInput), needAny(auth.PermDefinitionsWrite, auth.PermRunsOperate))
	t.GET("/definitions/:key/try/runs", handleTryRuns(d.Store), httpx.Need(auth.PermView))
	t.GET("/definitions/:key/try/runs/:id", handleTrySample(d.Store), httpx.Need(auth.PermView))
	editorRoutes(e, d, st)
	runPages(t, d)
	triggerPages(t, d)
	t.GET("/usage", handleUsagePage(d.Usage), httpx.Need(auth.PermView))
	t.GET("/settings", handleSettings(d.Store), httpx.Need(auth.PermView))
	t.POST("/settings/tier", handleTierSet(d.Store), httpx.Need(auth.PermTierManage))
	t.POST("/settings/retention", handleRetentionSet(d.Store), httpx.Need(auth.PermTierManage))
	t.GET("/settings/keys", handleKeys(d.Store), httpx.Need(auth.PermKeysManage))
	t.POST("/settings/keys", handleKeyCreate(d.Store), httpx.Need(auth.PermKeysManage))
	t.POST("/settings/keys/:id/revoke", handleKeyRevoke(d.Store), httpx.Need(auth.PermKeysManage))
	t.GET("/settings/members", handleMembers(d.Store), httpx.Need(auth.PermMembersManage))
	t.POST("/settings/members", handleMemberChange(d.Store, memberAdd), httpx.Need(auth.PermMembersManage))
	t.POST("/settings/members/role", handleMemberChange(d.Store, memberSet), httpx.Need(auth.PermMembersManage))
	t.POST("/settings/members/remove", handleMemberChange(d.Store, memberDel), httpx.Need(auth.PermMembersManage))
	t.GET("/settings/audit", handleAudit(d.Store), httpx.Need(auth.PermAuditRead))
	secretPages(t, d)
}

// editorRoutes lists the editor's posts: like the tenant pages, but they
// carry a whole definition document, so their body limit is the
// document's (form-encoded, up to three bytes a byte).
func editorRoutes(e *echo.Echo, d Deps, st httpx.Site) {
	limit := int64(3*definition.MaxDocumentBytes + httpx.MaxFormBytes)
	ed := e.Group("/t/:tenant/definitions/:key", httpx.BodyLimit(limit), httpx.LoadSession(d.Store, st), httpx.CSRFProtect, httpx.RequireLogin, httpx.TenantAccess(d.Store))
	ed.POST("/check", handleEditorCheck(), httpx.Need(auth.PermView))
	ed.POST("/draft", handleDraftSaveForm(d.Store), httpx.Need(auth.PermDefinitionsWrite))
	ed.POST("/publish", handlePublishForm(d.Store), httpx.Need(auth.PermDefinitionsWrite))
	ed.POST("/test", handleEditorTests(d.Store, newEditorTester()), needAny(auth.PermDefinitionsWrite, auth.PermRunsOperate))
	ed.POST("/try", handleEditorTry(newTryLimiter()), needAny(auth.PermDefinitionsWrite, auth.PermRunsOperate))
}

// runPages lists the runs list, the run inspector with its operator
// actions, and the approval inbox, under /t/{tenant}.
func runPages(t *echo.Group, d Deps) {
	operate, approve := httpx.Need(auth.PermRunsOperate), httpx.Need(auth.PermApprove)
	t.GET("/runs", handleRunsPage(d.Store), httpx.Need(auth.PermView))
	t.GET("/runs/count", handleRunsCount(d.Store), httpx.Need(auth.PermView))
	t.POST("/runs/batch", handleRunsBatchForm(d.Store, d.Runs), operate)
	upgradePages(t, d)
	t.GET("/batches/:id", handleBatchPage(d.Store), httpx.Need(auth.PermView))
	t.GET("/batches/:id/progress", handleBatchProgress(d.Store), httpx.Need(auth.PermView))
	t.POST("/batches/:id/stop", handleBatchStopForm(d.Store, d.Runs), operate)
	t.GET("/runs/:id", handleInspector(d.Store, d.Runs), httpx.Need(auth.PermView))
	t.GET("/runs/:id/live", handleInspectorLive(d.Store), httpx.Need(auth.PermView))
	t.GET("/runs/:id/events", handleInspectorEvents(d.Store, d.Stopping, d.LiveStreamFor), httpx.Need(auth.PermView))
	t.GET("/runs/:id/json/:part", handleRunJSON(d.Store), httpx.Need(auth.PermView))
	t.GET("/runs/:id/json/nodes/:node", handleRunJSON(d.Store), httpx.Need(auth.PermView))
	t.GET("/runs/:id/json/nodes/:node/attempts/:generation/:attempt", handleAttemptJSON(d.Store), httpx.Need(auth.PermView))
	t.GET("/runs/:id/json/signals", handleSignalJSON(d.Store), httpx.Need(auth.PermView))
	t.POST("/runs/:id/cancel", handleRunCancelForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/signal", handleRunSignalForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/continue-as-new", handleRunContinueForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/retry", handleNodeRetryForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/retry-children", handleRetryFailedChildrenForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/cancel-node", handleNodeCancelForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/approvals/:approval", handleNodeApprovalForm(d.Store, d.Runs), approve)
	t.GET("/inbox", handleInbox(d.Store, d.Runs), httpx.Need(auth.PermView))
	t.POST("/inbox/approvals/:id", handleApprovalDecide(d.Store, d.Runs), approve)
	t.POST("/inbox/cases/:id", handleCaseSave(d.Store, d.Runs), approve)
	t.GET("/inbox/cases/:id/data", handleCaseJSON(d.Store), httpx.Need(auth.PermView))
}

// triggerPages lists the schedules and webhooks pages under /t/{tenant}.
func triggerPages(t *echo.Group, d Deps) {
	write := httpx.Need(auth.PermSchedulesWrite)
	t.GET("/schedules", handleSchedulesPage(d.Store), httpx.Need(auth.PermView))
	t.POST("/schedules", handleScheduleCreateForm(d.Store, d.Runs, d.ValidateInput), write)
	t.GET("/schedules/:id", handleSchedulePage(d.Store), httpx.Need(auth.PermView))
	t.POST("/schedules/:id/pause", handleSchedulePauseForm(d.Store, d.Runs), write)
	t.POST("/schedules/:id/trigger", handleScheduleTriggerForm(d.Store, d.Runs), write)
	t.POST("/schedules/:id/delete", handleScheduleDeleteForm(d.Store), write)
	manage := httpx.Need(auth.PermWebhooksManage)
	t.GET("/webhooks", handleWebhooksPage(d), httpx.Need(auth.PermView))
	t.GET("/webhooks/:id", handleWebhookPage(d), httpx.Need(auth.PermView))
	t.POST("/webhooks", handleWebhookCreateForm(d), manage)
	t.POST("/webhooks/:id/rotate", handleWebhookRotateForm(d), manage)
	t.POST("/webhooks/:id/delete", handleWebhookDeleteForm(d.Store), manage)
	subscriptionPages(t, d)
}

// upgradePages lists "upgrade running runs" of a definition's version
// (docs/upgrades.md): the dry run's counts, then the batch.
func upgradePages(t *echo.Group, d Deps) {
	t.GET("/definitions/:key/versions/:n/upgrade", handleUpgradePage(d.Store, d.Runs), httpx.Need(auth.PermView))
	t.POST("/definitions/:key/versions/:n/unpublish", handleUnpublishForm(d.Store), httpx.Need(auth.PermDefinitionsWrite))
	t.POST("/definitions/:key/versions/:n/upgrade", handleUpgradeForm(d.Store, d.Runs), httpx.Need(auth.PermRunsOperate))
}

// secretPages lists the tenant secrets settings page under /t/{tenant}:
// every member sees the names and metadata; those who manage API keys
// set, rotate and delete.
func secretPages(t *echo.Group, d Deps) {
	svc := tenantsecrets.New(tenantsecrets.Config{Store: d.Store, Box: d.Secrets})
	manage := httpx.Need(auth.PermKeysManage)
	t.GET("/settings/secrets", handleSecretsPage(svc), httpx.Need(auth.PermView))
	t.POST("/settings/secrets", handleSecretSetForm(svc), manage)
	t.POST("/settings/secrets/:name/delete", handleSecretDeleteForm(svc), manage)
}

// subscriptionPages lists the outbound webhook subscription pages under
// /t/{tenant}: the list, each one's delivery log, and their forms.
func subscriptionPages(t *echo.Group, d Deps) {
	manage := httpx.Need(auth.PermWebhooksManage)
	t.GET("/subscriptions", handleSubscriptionsPage(d), httpx.Need(auth.PermView))
	t.POST("/subscriptions", handleSubscriptionCreateForm(d), manage)
	t.GET("/subscriptions/:id", handleSubscriptionPage(d), httpx.Need(auth.PermView))
	t.POST("/subscriptions/:id/rotate", handleSubscriptionRotateForm(d), manage)
	t.POST("/subscriptions/:id/enable", handleSubscriptionEnableForm(d), manage)
	t.POST("/subscriptions/:id/delete", handleSubscriptionDeleteForm(d), manage)
	t.POST("/subscriptions/:id/deliveries/:delivery/redeliver", handleSubscriptionRedeliverForm(d), manage)
}
