package httpx

import (
	"errors"
	"github.com/a-h/templ"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/views"
)

// StatusOf maps an error code to its HTTP status. This is the only place
// that does.
var StatusOf = map[apperr.Code]int{
	apperr.Invalid:             http.StatusBadRequest,
	apperr.InvalidDefinition:   http.StatusUnprocessableEntity,
	apperr.Unprocessable:       http.StatusUnprocessableEntity,
	apperr.Unauthorized:        http.StatusUnauthorized,
	apperr.Forbidden:           http.StatusForbidden,
	apperr.NotFound:            http.StatusNotFound,
	apperr.Conflict:            http.StatusConflict,
	apperr.IdempotencyMismatch: http.StatusConflict,
	apperr.ConcurrencyLimit:    http.StatusConflict,
	apperr.TooLarge:            http.StatusRequestEntityTooLarge,
	apperr.RateLimited:         http.StatusTooManyRequests,
	apperr.QuotaExceeded:       http.StatusTooManyRequests,
	apperr.Unavailable:         http.StatusServiceUnavailable,
	apperr.Internal:            http.StatusInternalServerError,
}

// codeOfStatus maps Echo's own errors (unknown route, wrong method, body too
// large) back to codes.
var codeOfStatus = map[int]apperr.Code{
	http.StatusBadRequest:            apperr.Invalid,
	http.StatusUnauthorized:          apperr.Unauthorized,
	http.StatusForbidden:             apperr.Forbidden,
	http.StatusNotFound:              apperr.NotFound,
	http.StatusMethodNotAllowed:      apperr.Invalid,
	http.StatusRequestEntityTooLarge: apperr.TooLarge,
	http.StatusUnsupportedMediaType:  apperr.Invalid,
	http.StatusTooManyRequests:       apperr.RateLimited,
	http.StatusServiceUnavailable:    apperr.Unavailable,
}

// ErrorBody is the JSON shape of every API error.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the inside of ErrorBody.
type ErrorDetail struct {
	Code    apperr.Code `json:"code"`
	Message string      `json:"message"`
	Details any         `json:"details,omitempty"`
}

// TenantErrorPage renders the error page of a page request made inside a
// tenant (its viewer known), with the tenant's navigation.
type TenantErrorPage func(c echo.Context, status int, message string) templ.Component

// ErrorHandler answers every error a handler returns: the JSON error
// shape, or the error page for a page request (tenantPage's, when given
// and the request is inside a tenant).
func ErrorHandler(log *slog.Logger, tenantPage ...TenantErrorPage) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		status, body := ToBody(err)
		if status == http.StatusServiceUnavailable {
			c.Response().Header().Set("Retry-After", retryAfter)
		}
		if wait := retryAfterOf(err); wait > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		}
		if status >= 500 {
			log.ErrorContext(c.Request().Context(), "request failed",
				"err", err, "path", c.Path(), "request_id", RequestID(c))
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
			return
		}
		if wantsHTML(c) {
			if _, inTenant := c.Get(viewerKey).(Viewer); inTenant && len(tenantPage) > 0 && tenantPage[0] != nil {
				_ = Render(c, status, tenantPage[0](c, status, body.Error.Message))
				return
			}
			_ = Render(c, status, views.ErrorPage(status, body.Error.Message))
			return
		}
		_ = c.JSON(status, body)
	}
}

// retryAfterOf is how long an error asks its caller to wait, if it says.
func retryAfterOf(err error) time.Duration {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae.RetryAfter
	}
	return 0
}

// retryAfter is the Retry-After of a 503, in seconds: a database restart
// takes a few.
const retryAfter = "2"

// errUnavailable is what a caller sees of an error saying the database
// cannot be reached (store.Unavailable): a 503 to retry, not a 500.
var errUnavailable = apperr.New(apperr.Unavailable, "the database is unavailable; try again shortly")

// ToBody is the status and JSON error body for err.
func ToBody(err error) (int, ErrorBody) {
	if apperr.CodeOf(err) == apperr.Internal && store.Unavailable(err) {
		err = apperr.Wrap(err, errUnavailable.Code, errUnavailable.Message)
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code, ok := codeOfStatus[he.Code]
		if !ok {
			code = apperr.Internal
		}
		msg := http.StatusText(he.Code)
		if m, ok := he.Message.(string); ok && he.Code < 500 {
			msg = m
		}
		return he.Code, ErrorBody{ErrorDetail{Code: code, Message: strings.ToLower(msg)}}
	}
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code == apperr.Internal {
		return http.StatusInternalServerError, ErrorBody{ErrorDetail{Code: apperr.Internal, Message: "internal error"}}
	}
	return StatusOf[ae.Code], ErrorBody{ErrorDetail{Code: ae.Code, Message: ae.Message, Details: ae.Details}}
}

func wantsHTML(c echo.Context) bool {
	return !strings.HasPrefix(c.Request().URL.Path, "/api/") &&
		strings.Contains(c.Request().Header.Get("Accept"), "text/html")
}

// FormError answers a client error in a form by showing the form's page
// again with the message, with the status the error's code maps to;
// anything else goes to the error handler.
func FormError(c echo.Context, err error, page func(status int, message string) error) error {
	status, body := ToBody(err)
	if status >= 500 {
		return err
	}
	return page(status, body.Error.Message)
}
