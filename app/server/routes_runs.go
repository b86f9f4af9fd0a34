package server

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
)

// runPages lists the runs list, the run inspector with its operator
// actions, and the approval inbox, under /t/{tenant}.
func runPages(t *echo.Group, d Deps) {
	operate, approve := need(auth.PermRunsOperate), need(auth.PermApprove)
	t.GET("/runs", handleRunsPage(d.Store), need(auth.PermView))
	t.GET("/runs/:id", handleInspector(d.Store, d.Runs), need(auth.PermView))
	t.GET("/runs/:id/live", handleInspectorLive(d.Store), need(auth.PermView))
	t.GET("/runs/:id/json/:part", handleRunJSON(d.Store), need(auth.PermView))
	t.GET("/runs/:id/json/nodes/:node", handleRunJSON(d.Store), need(auth.PermView))
	t.GET("/runs/:id/json/nodes/:node/attempts/:generation/:attempt", handleAttemptJSON(d.Store), need(auth.PermView))
	t.GET("/runs/:id/json/signals", handleSignalJSON(d.Store), need(auth.PermView))
	t.POST("/runs/:id/cancel", handleRunCancelForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/signal", handleRunSignalForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/continue-as-new", handleRunContinueForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/retry", handleNodeRetryForm(d.Store, d.Runs), operate)
	t.POST("/runs/:id/cancel-node", handleNodeCancelForm(d.Store, d.Runs), operate)
	t.GET("/inbox", handleInbox(d.Store, d.Runs), need(auth.PermView))
	t.POST("/inbox/approvals/:id", handleApprovalDecide(d.Store, d.Runs), approve)
	t.POST("/inbox/cases/:id", handleCaseSave(d.Store, d.Runs), approve)
	t.GET("/inbox/cases/:id/data", handleCaseJSON(d.Store), need(auth.PermView))
}
