package views

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ductor/ductor/app/auth"
	"github.com/ductor/ductor/app/store"
)

func queryEscape(s string) string { return url.QueryEscape(s) }

func statusText(status int) string { return http.StatusText(status) }

// when formats a time for tables; nil is "never".
func when(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func at(t time.Time) string { return when(&t) }

// nextRun is when a schedule acts next: none while it is paused (it
// plans afresh from the time it is unpaused).
func nextRun(sc store.Schedule) string {
	if sc.Paused {
		return "none while paused"
	}
	return when(sc.DueAt)
}

func join(s []string) string { return strings.Join(s, ", ") }

func scopeList(s []auth.Scope) string {
	names := make([]string, len(s))
	for i, v := range s {
		names[i] = string(v)
	}
	return join(names)
}

func detailsText(d map[string]any) string {
	if len(d) == 0 {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	return string(b)
}

// tierOption labels a tier in the tier picker: its name, and its queue
// class when that is another name.
func tierOption(t store.TierInfo) string {
	if t.QueueClass == t.Name {
		return string(t.Name)
	}
	return string(t.Name) + " (" + string(t.QueueClass) + " queue)"
}
