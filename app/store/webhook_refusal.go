package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/queries"
)

// RefusalReport is what counting a webhook's refusal decided: whether it
// is reported by a ductor.webhook.refused event, the refusals suppressed
// since the last report (which the event carries), and the report's time
// (the database's), which names the event.
type RefusalReport struct {
	Reported   bool
	Suppressed int64
	At         time.Time
}

// WebhookRefusalReport counts a refusal of a webhook and the unreported
// ones before it that the caller counted, in the caller's transaction,
// and reports it when the webhook's last report is at least every old.
// The bound holds across processes: the decision is one statement under
// the row's lock.
func (s *Store) WebhookRefusalReport(ctx context.Context, tenantID uuid.UUID, id string, before int64, every time.Duration) (RefusalReport, error) {
	row, err := s.q.WebhookRefusalReport(ctx, queries.WebhookRefusalReportParams{
		TenantID: tenantID, WebhookID: id, Refusals: max(before, 0), Every: interval(every),
	})
	if err != nil {
		return RefusalReport{}, fmt.Errorf("count a refusal of %s: %w", id, err)
	}
	return RefusalReport{Reported: row.Reported, Suppressed: row.ReportedSuppressed, At: row.ReportedAt}, nil
}
