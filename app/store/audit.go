package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Actors as they appear in the audit log.
const ActorCLI = "cli"

// ActorUser names a person acting through the dashboard.
func ActorUser(email string) string { return "user:" + email }

// ActorKey names an API key acting through the API.
func ActorKey(k APIKey) string { return "key:" + k.Prefix }

// Audit actions recorded so far; other packages add theirs.
const (
	AuditKeyCreate       = "api_key.create"
	AuditKeyRevoke       = "api_key.revoke"
	AuditMemberAdd       = "member.add"
	AuditMemberRole      = "member.role"
	AuditMemberRemove    = "member.remove"
	AuditTierChange      = "tenant.tier"
	AuditRetentionChange = "tenant.retention"

	AuditScheduleCreate   = "schedule.create"
	AuditScheduleUpdate   = "schedule.update"
	AuditSchedulePause    = "schedule.pause"
	AuditScheduleResume   = "schedule.resume"
	AuditScheduleDelete   = "schedule.delete"
	AuditScheduleTrigger  = "schedule.trigger"
	AuditScheduleBackfill = "schedule.backfill"
	AuditWebhookCreate    = "webhook.create"
	AuditWebhookRotate    = "webhook.rotate"
	AuditWebhookDelete    = "webhook.delete"
	AuditCaseUpdate       = "case.update"
)

// AuditEntry is one row of a tenant's audit log.
type AuditEntry struct {
	ID      int64
	At      time.Time
	Actor   string
	Action  string
	Target  string
	Details map[string]any
}

// AuditRecord appends a row to the tenant's audit log. Call it on the
// transaction that makes the change, so the row exists exactly when the
// change does. details may be nil.
func (s *Store) AuditRecord(ctx context.Context, tenantID uuid.UUID, actor, action, target string, details map[string]any) error {
	if details == nil {
		details = map[string]any{}
	}
	b, err := jsonvalue.Marshal(details)
	if err != nil {
		return fmt.Errorf("audit details: %w", err)
	}
	err = s.q.AuditRecord(ctx, queries.AuditRecordParams{
		TenantID: tenantID, Actor: actor, Action: action, Target: target, Details: b,
	})
	if err != nil {
		return fmt.Errorf("record audit %s: %w", action, err)
	}
	return nil
}

// AuditList returns the tenant's newest audit rows, at most max.
func (s *Store) AuditList(ctx context.Context, tenantID uuid.UUID, max int) ([]AuditEntry, error) {
	rows, err := s.q.AuditList(ctx, queries.AuditListParams{TenantID: tenantID, Max: int32(max)})
	if err != nil {
		return nil, fmt.Errorf("list audit log: %w", err)
	}
	out := make([]AuditEntry, len(rows))
	for i, r := range rows {
		out[i] = AuditEntry{ID: r.ID, At: r.At, Actor: r.Actor, Action: r.Action, Target: r.Target}
		if err := jsonvalue.Unmarshal(r.Details, &out[i].Details); err != nil {
			return nil, fmt.Errorf("audit row %d details: %w", r.ID, err)
		}
	}
	return out, nil
}
