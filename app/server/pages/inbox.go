package pages

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// inboxNotices confirm a decision (?done=NAME after the redirect).
var inboxNotices = map[string]string{
	"approve": "Approved.",
	"reject":  "Rejected.",
	"case":    "Case saved.",
}

// handleInbox shows the approvals and cases addressed to the person (by
// email) or their role, newest first: pending ones by default, decided
// ones with ?tab=decided.
func handleInbox(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		d := views.InboxData{Tab: c.QueryParam("tab"), Notice: inboxNotices[c.QueryParam("done")],
			Definition: c.QueryParam("definition"), Assigned: c.QueryParam("assigned")}
		return renderInbox(c, s, rs, http.StatusOK, d)
	}
}

func renderInbox(c echo.Context, s *store.Store, rs *runs.Service, status int, d views.InboxData) error {
	if d.Tab != "decided" {
		d.Tab = "pending"
	}
	d.CanDecide = httpx.ViewerOf(c).Can(auth.PermApprove)
	box, err := loadInbox(c.Request().Context(), s, httpx.ViewerOf(c))
	if err != nil {
		return err
	}
	d.Pending = len(box.approvals[true]) + len(box.cases[true])
	pending := d.Tab == "pending"
	ctxs := runContexts{s: s, runs: rs, tenant: httpx.ViewerOf(c).Tenant.ID, slug: httpx.ViewerOf(c).Tenant.Slug, reader: httpx.CaseReaderOf(c)}
	if d.Assigned != "me" && d.Assigned != "role" {
		d.Assigned = ""
	}
	email := httpx.ViewerOf(c).User.Email
	keys := map[string]bool{}
	for _, a := range box.approvals[pending] {
		item, err := ctxs.approval(c.Request().Context(), a, store.UserPrincipal(httpx.ViewerOf(c).User.ID))
		if err != nil {
			return err
		}
		keys[item.RunKey] = true
		if inboxShows(d, item.RunKey, a.Approvers, email) {
			d.Approvals = append(d.Approvals, item)
		}
	}
	for _, k := range box.cases[pending] {
		item := ctxs.kase(c.Request().Context(), k, d)
		keys[item.RunKey] = true
		if inboxShows(d, item.RunKey, k.Assignees, email) {
			d.Cases = append(d.Cases, item)
		}
	}
	d.Definitions = slices.Sorted(maps.Keys(keys))
	return httpx.Render(c, status, views.InboxPage(shellFor(c, "Inbox", "inbox"), d))
}

// inboxShows reports whether the inbox's filters keep an item of a run
// of key addressed to who: by definition, and by how it reaches the
// person (me: by their email; role: through a role of theirs).
func inboxShows(d views.InboxData, key string, who []string, email string) bool {
	if d.Definition != "" && key != d.Definition {
		return false
	}
	direct := slices.ContainsFunc(who, func(w string) bool {
		return strings.EqualFold(strings.TrimPrefix(w, "user:"), email)
	})
	switch d.Assigned {
	case "me":
		return direct
	case "role":
		return !direct
	}
	return true
}

// inbox is a person's approvals and cases split into pending (true) and
// decided (false).
type inbox struct {
	approvals map[bool][]store.Approval
	cases     map[bool][]store.Case
}

// loadInbox reads the newest approvals and cases addressed to the viewer.
// An approval the viewer already decided is decided for them, even while
// it waits for other approvers.
func loadInbox(ctx context.Context, s *store.Store, v httpx.Viewer) (inbox, error) {
	box := inbox{approvals: map[bool][]store.Approval{}, cases: map[bool][]store.Case{}}
	approvals, err := s.ApprovalsFor(ctx, v.Tenant.ID, v.User.Email, []string{string(v.Role)}, "")
	if err != nil {
		return box, err
	}
	for _, a := range approvals {
		pending := a.Status == store.ApprovalPending && myDecision(a, store.UserPrincipal(v.User.ID)) == nil
		box.approvals[pending] = append(box.approvals[pending], a)
	}
	cases, err := s.CasesFor(ctx, v.Tenant.ID, v.User.Email, []string{string(v.Role)}, "")
	if err != nil {
		return box, err
	}
	for _, k := range cases {
		box.cases[k.ClosedAt == nil] = append(box.cases[k.ClosedAt == nil], k)
	}
	return box, nil
}

// myDecision is the decision principal took on a, made in the dashboard
// or by a key they made.
func myDecision(a store.Approval, principal string) *store.ApprovalDecision {
	for i := range a.Decisions {
		if a.Decisions[i].Principal == principal {
			return &a.Decisions[i]
		}
	}
	return nil
}

// inboxCount is the number of things waiting for the viewer, for the
// navigation's badge; a failure shows no badge rather than no page.
func inboxCount(ctx context.Context, s *store.Store, v httpx.Viewer) int {
	box, err := loadInbox(ctx, s, v)
	if err != nil {
		return 0
	}
	return len(box.approvals[true]) + len(box.cases[true])
}

// handleApprovalDecide records the viewer's decision on an approval in
// their inbox and comes back to the inbox.
func handleApprovalDecide(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := inboxAction(c, "approval", func(id uuid.UUID) error { return decideApproval(c, rs, id) })
		return afterInbox(c, s, rs, err, c.FormValue("decision"))
	}
}

// decideApproval records the viewer's decision (the form's decision,
// approve or reject, and comment) on approval id: by their own name (so
// min_approvals counts people) and only when their email or role is
// among the approvers. The inbox and the inspector's step panel both
// decide with it.
func decideApproval(c echo.Context, rs *runs.Service, id uuid.UUID) error {
	v := httpx.ViewerOf(c)
	decision := c.FormValue("decision")
	if decision != "approve" && decision != "reject" {
		return errBadDecision
	}
	_, err := rs.DecideApproval(c.Request().Context(), v.Tenant.ID, id, store.Decision{
		By: v.Actor(), Principal: store.UserPrincipal(v.User.ID), Approved: decision == "approve", Comment: c.FormValue("comment"),
		Who: store.Audience(v.User.Email, string(v.Role)),
	})
	return err
}

// inboxBadge counts, for the shell, what waits for the viewer.
func inboxBadge(c echo.Context) int {
	s, ok := c.Get(httpx.StoreKey).(*store.Store)
	if !ok {
		return 0
	}
	return inboxCount(c.Request().Context(), s, httpx.ViewerOf(c))
}
