package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// Every list of the API refuses a query parameter it does not know, by
// name, and takes the ones it documents.
func TestListsRefuseUnknownQueryParameters(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	const run = "/api/v1/runs/00000000-0000-0000-0000-000000000001"
	lists := []struct {
		route, path, known string
		status             int // the answer to the known parameters
	}{
		{"/api/v1/runs", "/api/v1/runs", "status=running&definition=d&definition_match=prefix&subject=s&q=x&parent_run_id=00000000-0000-0000-0000-000000000001" +
			"&attr.region=eu&attrs=tier%3Dgold&from=2026-01-01T00:00&to=2030-01-01T00:00&count=true&include=input&limit=5&cursor=", http.StatusOK},
		{"/api/v1/runs/:id/history", run + "/history", "after=0&limit=5", http.StatusNotFound},
		{"/api/v1/runs/:id/nodes/:node/children", run + "/nodes/s/children", "state=failed&q=4&after=-1&limit=5", http.StatusNotFound},
		{"/api/v1/approvals", "/api/v1/approvals", "status=pending&limit=5", http.StatusOK},
		{"/api/v1/cases", "/api/v1/cases", "status=open&include=data&limit=5", http.StatusOK},
		{"/api/v1/definitions", "/api/v1/definitions", "limit=5&cursor=", http.StatusOK},
		{"/api/v1/schedules", "/api/v1/schedules", "limit=5&cursor=", http.StatusOK},
		{"/api/v1/webhooks", "/api/v1/webhooks", "limit=5&cursor=", http.StatusOK},
		{"/api/v1/webhooks/:id/deliveries", "/api/v1/webhooks/missing/deliveries", "limit=5&result=refused", http.StatusNotFound},
		{"/api/v1/secrets", "/api/v1/secrets", "limit=5&cursor=", http.StatusOK},
		{"/api/v1/subscriptions", "/api/v1/subscriptions", "limit=5", http.StatusOK},
		{"/api/v1/subscriptions/:id/deliveries", "/api/v1/subscriptions/00000000-0000-0000-0000-000000000001/deliveries", "limit=5", http.StatusNotFound},
	}
	covered := map[string]bool{}
	for _, l := range lists {
		covered["GET "+l.route] = true
		if code, res := b.call(t, "GET", l.path+"?"+l.known, b.keyA, ""); code != l.status {
			t.Errorf("GET %s?%s = %d %v, want %d", l.path, l.known, code, res, l.status)
		}
		code, res := b.call(t, "GET", l.path+"?"+l.known+"&statuss=running&limit=5", b.keyA, "")
		e, _ := res["error"].(map[string]any)
		details, _ := e["details"].([]any)
		if code != http.StatusUnprocessableEntity || e["code"] != "unprocessable" || len(details) != 1 ||
			details[0].(map[string]any)["parameter"] != "statuss" || !strings.Contains(e["message"].(string), `"statuss"`) {
			t.Errorf("GET %s with an unknown parameter = %d %v, want 422 naming it", l.path, code, res)
		}
	}
	// Every list the API serves is in the table: a GET whose path does
	// not end in an id (usage is a report, not a paged list: its own test
	// checks its parameters).
	for _, r := range b.echoRoutes {
		method, path, _ := strings.Cut(r, " ")
		last := path[strings.LastIndex(path, "/")+1:]
		if method == "GET" && !strings.HasPrefix(last, ":") && !covered[r] && !strings.Contains("whoami openapi.json definition.json usage", last) {
			t.Errorf("%s is not in the table of lists", r)
		}
	}
}

// A NUL in a path or a query parameter, which no query can hold, is
// refused before it reaches the database.
func TestNULInPathOrQueryIsRefused(t *testing.T) {
	t.Parallel()
	b := setupAPI(t)
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/api/v1/definitions/a%00b", http.StatusNotFound},
		{"/api/v1/definitions/a%00b/versions/1", http.StatusNotFound},
		{"/api/v1/runs?definition=a%00", http.StatusUnprocessableEntity},
		{"/api/v1/runs?subject=%00", http.StatusUnprocessableEntity},
		{"/api/v1/runs?q=%00", http.StatusUnprocessableEntity},
		{"/api/v1/runs?attr.region=%00", http.StatusUnprocessableEntity},
		{"/api/v1/runs?attr.a%00=1", http.StatusUnprocessableEntity},
		{"/api/v1/approvals?status=%00", http.StatusUnprocessableEntity},
		{"/api/v1/cases?status=%00", http.StatusUnprocessableEntity},
	} {
		if code, res := b.call(t, "GET", c.path, b.keyA, ""); code != c.status {
			t.Errorf("GET %s = %d %v, want %d", c.path, code, res, c.status)
		}
	}
}
