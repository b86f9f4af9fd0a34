package pages

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// The inspector's operator actions are plain form posts: each hands a
// control intent to the coordinator and redirects back to the run with
// ?done=ACTION, or shows the run again with the error and what was typed.

// handleRunCancelForm asks the run to cancel, recording who asked and the
// reason typed on the run.
func handleRunCancelForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		reason := strings.TrimSpace(c.FormValue("reason"))
		err := withRunID(c, func(id uuid.UUID) error {
			if utf8.RuneCountInString(reason) > httpx.MaxReasonLength {
				return apperr.New(apperr.Invalid, "the reason is longer than %d characters", httpx.MaxReasonLength)
			}
			in := engine.Cancel{RequestID: uuid.NewString(), Reason: reason, By: v.Actor()}
			return rs.Control(c.Request().Context(), v.Tenant.ID, id, in)
		})
		return afterAction(c, s, rs, err, "cancel", views.ActionForm{})
	}
}

// handleRunSignalForm sends a signal: the name is required, the request id
// is generated when empty, the payload is JSON (empty: null).
func handleRunSignalForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		form := views.ActionForm{
			SignalName: strings.TrimSpace(c.FormValue("name")), SignalRequestID: strings.TrimSpace(c.FormValue("request_id")),
			SignalPayload: c.FormValue("payload"),
		}
		err := withRunID(c, func(id uuid.UUID) error {
			if form.SignalName == "" {
				return apperr.New(apperr.Invalid, "a signal needs a name")
			}
			payload, err := formJSON("payload", form.SignalPayload)
			if err != nil {
				return err
			}
			sig := engine.Signal{RequestID: form.SignalRequestID, Name: form.SignalName, Payload: payload}
			if sig.RequestID == "" {
				sig.RequestID = uuid.NewString()
			}
			_, err = rs.Signal(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, id, sig)
			return err
		})
		return afterAction(c, s, rs, err, "signal", form)
	}
}

// handleRunContinueForm asks the run to continue as new, with the given
// JSON input or, when empty, its own.
func handleRunContinueForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		form := views.ActionForm{CANInput: c.FormValue("input")}
		err := withRunID(c, func(id uuid.UUID) error {
			input, err := formJSON("input", form.CANInput)
			if err != nil {
				return err
			}
			_, err = rs.ContinueAsNew(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, id, uuid.NewString(), input)
			return err
		})
		return afterAction(c, s, rs, err, "can", form)
	}
}

// handleNodeRetryForm retries the failed (or cancelled) node the form
// names.
func handleNodeRetryForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := withRunID(c, func(id uuid.UUID) error {
			return rs.RetryNode(c.Request().Context(), httpx.ViewerOf(c).Tenant.ID, id, c.FormValue("node"))
		})
		return afterAction(c, s, rs, err, "retry", views.ActionForm{})
	}
}

func withRunID(c echo.Context, act func(uuid.UUID) error) error {
	id, err := httpx.PathUUID(c, "id", "run")
	if err != nil {
		return err
	}
	return act(id)
}

// formJSON parses a JSON form field; empty is nil.
func formJSON(field, raw string) (any, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	v, err := jsonvalue.Decode([]byte(raw))
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "the %s must be JSON: %v", field, err)
	}
	return v, nil
}

// afterAction redirects to the run on success; a client error shows the
// run again with the message (an unknown run is the plain 404 page).
func afterAction(c echo.Context, s *store.Store, rs *runs.Service, err error, done string, form views.ActionForm) error {
	if err == nil {
		return seeOther(c, "/runs/"+c.Param("id")+afterActionQuery(c.FormValue("here"), done))
	}
	if apperr.CodeOf(err) == apperr.NotFound {
		return err
	}
	return httpx.FormError(c, err, func(status int, msg string) error {
		q, _ := url.ParseQuery(c.FormValue("here"))
		c.Request().URL.RawQuery = hereOf(q).Encode() // the page as it was
		d, lerr := loadInspector(c, s, rs)
		if lerr != nil {
			return lerr
		}
		d.Error, d.Form = msg, form
		return renderInspector(c, status, d)
	})
}

// afterActionQuery is where an action redirects: the page's selection
// (the form's here field: node, children filter, history page, layout)
// and which action it confirms.
func afterActionQuery(here, done string) string {
	q, _ := url.ParseQuery(here)
	q = hereOf(q)
	q.Set("done", done)
	frag := ""
	if q.Get("node") != "" {
		frag = "#node"
	}
	return "?" + q.Encode() + frag
}

// handleNodeCancelForm is the inspector's "Cancel node": it cancels the
// running or waiting node the form names, with the reason typed (by
// default who cancelled it).
func handleNodeCancelForm(s *store.Store, rs *runs.Service) echo.HandlerFunc {
	return func(c echo.Context) error {
		v := httpx.ViewerOf(c)
		reason := strings.TrimSpace(c.FormValue("reason"))
		if reason == "" {
			reason = "by " + v.User.Email
		}
		err := withRunID(c, func(id uuid.UUID) error {
			if utf8.RuneCountInString(reason) > httpx.MaxReasonLength {
				return apperr.New(apperr.Invalid, "the reason is longer than %d characters", httpx.MaxReasonLength)
			}
			return rs.CancelNode(c.Request().Context(), v.Tenant.ID, id, c.FormValue("node"), reason)
		})
		return afterAction(c, s, rs, err, "cancel-node", views.ActionForm{})
	}
}
