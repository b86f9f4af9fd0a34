package server

import (
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/static"
)

// routes lists every route Ductor serves: the process-wide ones here, the
// API's in apiRoutes and the dashboard's in webRoutes.
func routes(e *echo.Echo, d Deps) {
	e.Use(requestMetrics(newHTTPMetrics(d.Registry)))
	e.Use(middleware.RequestID())
	e.Use(securityHeaders)
	e.Use(requestLogger(d.Logger))
	e.Use(recoverer(d.Logger))
	e.Use(refuseNUL)

	e.GET("/healthz", handleHealthz())
	e.GET("/readyz", handleReadyz(d.Pool))
	e.GET("/metrics", metricsHandler(d.Registry, d.Logger))

	if d.API {
		e.GET("/api/v1/openapi.json", handleOpenAPI()) // documentation: no key needed
		e.GET(definition.SchemaPath, handleDefinitionSchema())
		failures := newFailureLimiter(d.AuthFailuresPerMinute, d.AuthFailureBurst)
		apiRoutes(e.Group("/api/v1", bodyLimit(MaxBodyBytes), apiKeyAuth(d.Store, failures, d.TrustedProxies), rateLimit(d.APIRate)), d)
		h := newHooks(d)
		e.POST("/hooks/:tenant/:id", h.handleHookDelivery) // signed: no API key; bounds its body itself
	}
	if d.Web {
		e.Pre(trailingSlash)
		e.GET(static.Prefix+"*", echo.WrapHandler(static.Handler()))
		e.GET("/favicon.ico", handleFavicon())
		webRoutes(e, d)
	}
}

// apiRoutes lists the JSON API under /api/v1; every route is authenticated
// by an API key and confined to the key's tenant.
func apiRoutes(api *echo.Group, d Deps) {
	api.GET("/whoami", handleWhoami())
	waitingRoutes(api, d)
	taskRoutes(api, d)
	scheduleRoutes(api, d)
	webhookRoutes(api, d)

	read, write := requireScope(auth.ScopeRunsRead), requireScope(auth.ScopeRunsWrite)
	api.POST("/runs", handleRunStart(d.Runs, d.ValidateInput), write)
	api.GET("/runs", handleRunList(d.Store), read, allowQuery(runListParams...))
	api.GET("/runs/:id", handleRunGet(d.Store, d.Runs), read)
	api.GET("/runs/:id/history", handleRunHistory(d.Store), read, allowQuery(historyParams...))
	api.GET("/runs/:id/nodes/:node/children", handleScatterChildren(d.Store, d.Runs), read, allowQuery(childrenParams...))
	api.POST("/runs/batch", handleBatchCreate(d.Store, d.Runs), write)
	api.GET("/batches/:id", handleBatchGet(d.Store), read)
	api.POST("/runs/:id/cancel", handleRunCancel(d.Runs), write)
	api.POST("/runs/:id/nodes/:node/retry", handleNodeRetry(d.Runs), write)
	api.POST("/runs/:id/nodes/:node/cancel", handleNodeCancel(d.Runs), write)
	api.POST("/runs/:id/continue-as-new", handleContinueAsNew(d.Runs), write)

	defRead, defWrite := requireScope(auth.ScopeDefinitionsRead), requireScope(auth.ScopeDefinitionsWrite)
	api.POST("/compile", handleCompile(), defRead)
	api.GET("/definitions", handleDefinitionList(d.Store), defRead, allowQuery(keyedListParams...))
	api.GET("/definitions/:key", handleDefinitionGet(d.Store), defRead)
	api.PUT("/definitions/:key", handleDraftSave(d.Store), defWrite)
	api.POST("/definitions/:key/versions", handlePublish(d.Store), defWrite)
	api.GET("/definitions/:key/versions/:n", handleVersionGet(d.Store), defRead)
	api.DELETE("/definitions/:key/versions/:n", handleVersionUnpublish(d.Store), defWrite)
}

// webRoutes lists the dashboard's pages. Every route loads the session
// and refuses cross-site state changes; pages under /t/{tenant} also need
// a login and a membership of the tenant (or answer 404), and each names
// the permission its role check needs.
func webRoutes(e *echo.Echo, d Deps) {
	st := site{DevLogin: d.DevLogin, SecureCookies: d.secureCookies()}
	web := []echo.MiddlewareFunc{bodyLimit(MaxFormBytes), loadSession(d.Store, st), csrfProtect}
	e.GET("/", handleHome(d.Store), web...)
	e.GET("/login", handleLoginPage(d.Login), web...)
	e.GET("/login/oidc", handleLoginStart(d.Store, d.Login), web...)
	e.GET("/auth/callback", handleLoginCallback(d.Store, d.Login), web...)
	e.POST("/login/dev", handleDevLogin(d.Store), web...)
	e.POST("/logout", handleLogout(d.Store, d.Login, d.BaseURL), web...)

	t := e.Group("/t/:tenant", append(web, requireLogin, tenantAccess(d.Store))...)
	t.GET("", handleTenantHome(), need(auth.PermView))
	t.GET("/definitions", handleDefinitions(d.Store), need(auth.PermView))
	t.POST("/definitions", handleDefinitionCreate(d.Store), need(auth.PermDefinitionsWrite))
	t.GET("/definitions/:key/edit", handleEditor(d.Store), need(auth.PermView))
	t.GET("/definitions/:key/diff", handleDefinitionDiff(d.Store), need(auth.PermView))
	t.POST("/definitions/:key/runs", handleTestRun(d.Runs, d.ValidateInput), needAny(auth.PermDefinitionsWrite, auth.PermRunsOperate))
	editorRoutes(e, d, st)
	runPages(t, d)
	triggerPages(t, d)
	t.GET("/settings", handleSettings(d.Store), need(auth.PermView))
	t.POST("/settings/tier", handleTierSet(d.Store), need(auth.PermTierManage))
	t.POST("/settings/retention", handleRetentionSet(d.Store), need(auth.PermTierManage))
	t.GET("/settings/keys", handleKeys(d.Store), need(auth.PermKeysManage))
	t.POST("/settings/keys", handleKeyCreate(d.Store), need(auth.PermKeysManage))
	t.POST("/settings/keys/:id/revoke", handleKeyRevoke(d.Store), need(auth.PermKeysManage))
	t.GET("/settings/members", handleMembers(d.Store), need(auth.PermMembersManage))
	t.POST("/settings/members", handleMemberChange(d.Store, memberAdd), need(auth.PermMembersManage))
	t.POST("/settings/members/role", handleMemberChange(d.Store, memberSet), need(auth.PermMembersManage))
	t.POST("/settings/members/remove", handleMemberChange(d.Store, memberDel), need(auth.PermMembersManage))
	t.GET("/settings/audit", handleAudit(d.Store), need(auth.PermAuditRead))
}

// editorRoutes lists the editor's posts: like the tenant pages, but they
// carry a whole definition document, so their body limit is the
// document's (form-encoded, up to three bytes a byte).
func editorRoutes(e *echo.Echo, d Deps, st site) {
	limit := int64(3*definition.MaxDocumentBytes + MaxFormBytes)
	ed := e.Group("/t/:tenant/definitions/:key", bodyLimit(limit), loadSession(d.Store, st), csrfProtect, requireLogin, tenantAccess(d.Store))
	ed.POST("/check", handleEditorCheck(), need(auth.PermView))
	ed.POST("/draft", handleDraftSaveForm(d.Store), need(auth.PermDefinitionsWrite))
	ed.POST("/publish", handlePublishForm(d.Store), need(auth.PermDefinitionsWrite))
}
