package views

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
)

// A pending approval's card says when it expires (its timeout); a closed
// one does not.
func TestApprovalCardSaysWhenItExpires(t *testing.T) {
	at := time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)
	render := func(status string) string {
		a := InboxApproval{Approval: store.Approval{ID: uuid.New(), RunID: uuid.New(), Node: "ok", Status: status, ExpiresAt: &at, MinApprovals: 1}}
		var b bytes.Buffer
		if err := approvalCard(ShellData{}, InboxData{}, a).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := render("pending"); !strings.Contains(got, `class="expires">expires `+runStamp(at)) {
		t.Errorf("a pending approval's card does not say when it expires:\n%s", got)
	}
	if got := render("approved"); strings.Contains(got, `class="expires"`) {
		t.Errorf("an approved card says it expires:\n%s", got)
	}
}
