package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/queries"
)

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalRejected = "rejected"
	// ApprovalClosed: the node stopped waiting (timeout, cancellation).
	ApprovalClosed = "closed"
)

// interactionNamespace is the UUIDv5 namespace of approval and case ids.
var interactionNamespace = uuid.MustParse("5b0e4c1e-7a53-4a9b-9d0e-3c6f1f2a8d41")

// ApprovalID is the id of the approval a node opens under key (its
// idempotency key): a re-executed tick opens the same one.
func ApprovalID(key string) uuid.UUID {
	return uuid.NewSHA1(interactionNamespace, []byte("approval:"+key))
}

// CaseID is the id of the case a human_loop node opens under key.
func CaseID(key string) uuid.UUID { return uuid.NewSHA1(interactionNamespace, []byte("case:"+key)) }

// Approval is an approval request and the decisions taken on it.
type Approval struct {
	TenantID     uuid.UUID          `json:"-"`
	ID           uuid.UUID          `json:"id"`
	RunID        uuid.UUID          `json:"run_id"`
	Node         string             `json:"node"`
	Title        string             `json:"title"`
	Description  string             `json:"description"`
	Approvers    []string           `json:"approvers"`
	MinApprovals int                `json:"min_approvals"`
	Status       string             `json:"status"`
	ExpiresAt    *time.Time         `json:"expires_at"`
	CreatedAt    time.Time          `json:"created_at"`
	DecidedAt    *time.Time         `json:"decided_at"`
	Decisions    []ApprovalDecision `json:"decisions"`
}

// ApprovalDecision is one person's decision. By is how the decider is
// shown (user:EMAIL or key:NAME); Principal is who they are (see
// DeciderPrincipal). In lists Comment is a preview of CommentPreview
// characters and an ellipsis, with CommentTruncated set.
type ApprovalDecision struct {
	By               string    `json:"by"`
	Principal        string    `json:"principal"`
	Approved         bool      `json:"approved"`
	Comment          string    `json:"comment,omitempty"`
	CommentTruncated bool      `json:"comment_truncated,omitempty"`
	At               time.Time `json:"at"`
}

// MaxCommentBytes bounds a decision's comment.
const MaxCommentBytes = 4 << 10

// CommentPreview is how many characters of a comment lists show.
const CommentPreview = 200

// ApprovalOpen stores a new approval; opening the same id again does
// nothing.
func (s *Store) ApprovalOpen(ctx context.Context, a Approval) error {
	err := s.q.ApprovalInsert(ctx, queries.ApprovalInsertParams{
		TenantID: a.TenantID, ID: a.ID, RunID: a.RunID, Node: a.Node, Title: a.Title,
		Description: a.Description, Approvers: orNone(a.Approvers), MinApprovals: int32(max(a.MinApprovals, 1)),
		ExpiresAt: a.ExpiresAt,
	})
	if err != nil {
		return fmt.Errorf("open approval: %w", err)
	}
	return nil
}

// ApprovalClose withdraws a pending approval whose node stopped waiting.
func (s *Store) ApprovalClose(ctx context.Context, tenantID, id uuid.UUID) error {
	if err := s.q.ApprovalClose(ctx, queries.ApprovalCloseParams{TenantID: tenantID, ID: id}); err != nil {
		return fmt.Errorf("close approval: %w", err)
	}
	return nil
}

// ApprovalGet returns an approval with its decisions.
func (s *Store) ApprovalGet(ctx context.Context, tenantID, id uuid.UUID) (Approval, error) {
	row, err := s.q.ApprovalGet(ctx, queries.ApprovalGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Approval{}, notFound(err, "approval")
	}
	out, err := s.withDecisions(ctx, tenantID, []queries.Approval{row}, 0)
	if err != nil {
		return Approval{}, err
	}
	return out[0], nil
}

// ApprovalFilter narrows ApprovalList.
type ApprovalFilter struct {
	Status string
	// Who, when set, keeps approvals addressed to any entry: an email or
	// role:NAME (see Audience). Empty: all of the tenant's.
	Who   []string
	Limit int
}

// Audience is who a person is to approvals and cases: their email and
// role:NAME for each of their roles.
func Audience(email string, roles ...string) []string {
	who := []string{email}
	for _, r := range roles {
		who = append(who, "role:"+r)
	}
	return who
}

// Addressed reports whether any of who (see Audience and KeyAudience) is
// among approvers: whether the approval is theirs to decide.
func Addressed(approvers, who []string) bool {
	return slices.ContainsFunc(approvers, func(a string) bool { return slices.Contains(who, a) })
}

// ApprovalList returns the tenant's approvals matching f, newest first,
// their comments cut to previews (ApprovalGet has them whole).
func (s *Store) ApprovalList(ctx context.Context, tenantID uuid.UUID, f ApprovalFilter) ([]Approval, error) {
	rows, err := s.q.ApprovalList(ctx, queries.ApprovalListParams{
		TenantID: tenantID, Status: f.Status, Who: orNone(f.Who), MaxRows: int32(limitOr(f.Limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return s.withDecisions(ctx, tenantID, rows, CommentPreview)
}

// ApprovalsFor is a person's inbox: the tenant's approvals in status
// (empty: any) addressed to their email or one of their roles.
func (s *Store) ApprovalsFor(ctx context.Context, tenantID uuid.UUID, email string, roles []string, status string) ([]Approval, error) {
	return s.ApprovalList(ctx, tenantID, ApprovalFilter{Status: status, Who: Audience(email, roles...)})
}

// ApprovalsOfRun lists a run's approvals, oldest first.
func (s *Store) ApprovalsOfRun(ctx context.Context, tenantID, runID uuid.UUID) ([]Approval, error) {
	rows, err := s.q.ApprovalListByRun(ctx, queries.ApprovalListByRunParams{TenantID: tenantID, RunID: runID})
	if err != nil {
		return nil, fmt.Errorf("list approvals of run: %w", err)
	}
	return s.withDecisions(ctx, tenantID, rows, 0)
}

// Decision is a decision to record on an approval.
type Decision struct {
	By string
	// Principal is who decides (see DeciderPrincipal): one decision each.
	// The API and the dashboard always set it; empty means By.
	Principal string
	Approved  bool
	Comment   string
	// Who is who the decider is to approvals (see Audience and
	// KeyAudience): the decision is refused unless it meets one of the
	// approval's approvers.
	Who []string
}

// DeciderKey shows an API key deciding an approval: key:NAME.
func DeciderKey(k APIKey) string { return "key:" + k.Name }

// UserPrincipal is a person as a decider: user:ID, whatever their email
// or name.
func UserPrincipal(userID uuid.UUID) string { return "user:" + userID.String() }

// DeciderPrincipal is who an API key is as a decider: the person who made
// it (so one person and a key they made are one decider toward
// min_approvals), or the key itself (key:ID) when an operator made it.
// Never its name, which whoever makes a key chooses.
func DeciderPrincipal(k APIKey) string {
	if k.CreatedBy != nil {
		return UserPrincipal(*k.CreatedBy)
	}
	return "key:" + k.ID.String()
}

// KeyAudience is who an API key is to approvals: key:NAME, and nothing
// for a key without a name. Emails and role:NAME entries are people: a
// key never meets them, however broad its scopes.
func KeyAudience(k APIKey) []string {
	if k.Name == "" {
		return []string{}
	}
	return []string{DeciderKey(k)}
}

// ApprovalDecide records one identity's decision, in the caller's
// transaction: a decider none of whose Who is among the approvers is
// Forbidden; an approval no longer pending, or a second decision by the
// same identity, is a Conflict. It returns the approval after the decision
// (approved once min_approvals distinct people approved, rejected at the
// first rejection).
func (s *Store) ApprovalDecide(ctx context.Context, tenantID, id uuid.UUID, d Decision) (Approval, error) {
	if len(d.Comment) > MaxCommentBytes {
		return Approval{}, apperr.New(apperr.Unprocessable, "comment is %d bytes, over the limit of %d", len(d.Comment), MaxCommentBytes)
	}
	if d.Principal == "" {
		d.Principal = d.By // a caller inside the process, not a request
	}
	row, err := s.q.ApprovalGetForUpdate(ctx, queries.ApprovalGetForUpdateParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Approval{}, notFound(err, "approval")
	}
	if !Addressed(row.Approvers, d.Who) {
		return Approval{}, apperr.New(apperr.Forbidden, "you are not an approver of this approval")
	}
	if row.Status != ApprovalPending {
		return Approval{}, apperr.New(apperr.Conflict, "approval is already %s", row.Status)
	}
	n, err := s.q.ApprovalDecisionInsert(ctx, queries.ApprovalDecisionInsertParams{
		TenantID: tenantID, ApprovalID: id, DecidedBy: d.By, Principal: d.Principal, Approved: d.Approved, Comment: d.Comment,
	})
	if err != nil {
		return Approval{}, fmt.Errorf("record decision: %w", err)
	}
	if n == 0 {
		return Approval{}, apperr.New(apperr.Conflict, "%s has already decided on this approval (as a person, or by a key they made)", d.By)
	}
	if err := s.approvalSettle(ctx, row, d.Approved); err != nil {
		return Approval{}, err
	}
	return s.ApprovalGet(ctx, tenantID, id)
}

// approvalSettle marks the approval rejected, or approved once enough
// distinct people approved.
func (s *Store) approvalSettle(ctx context.Context, a queries.Approval, approved bool) error {
	status := ApprovalRejected
	if approved {
		n, err := s.q.ApprovalDecisionCountApproved(ctx, queries.ApprovalDecisionCountApprovedParams{TenantID: a.TenantID, ApprovalID: a.ID})
		if err != nil {
			return fmt.Errorf("count approvals: %w", err)
		}
		if n < int64(a.MinApprovals) {
			return nil
		}
		status = ApprovalApproved
	}
	if err := s.q.ApprovalSetStatus(ctx, queries.ApprovalSetStatusParams{Status: status, TenantID: a.TenantID, ID: a.ID}); err != nil {
		return fmt.Errorf("settle approval: %w", err)
	}
	return nil
}

// withDecisions adds the approvals' decisions, each comment cut to
// preview characters unless preview is 0.
func (s *Store) withDecisions(ctx context.Context, tenantID uuid.UUID, rows []queries.Approval, preview int) ([]Approval, error) {
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	ds, err := s.q.ApprovalDecisionList(ctx, queries.ApprovalDecisionListParams{TenantID: tenantID, ApprovalIds: ids, Preview: int32(preview)})
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", err)
	}
	byID := map[uuid.UUID][]ApprovalDecision{}
	for _, d := range ds {
		dec := ApprovalDecision{By: d.DecidedBy, Principal: d.Principal, Approved: d.Approved, Comment: d.Comment, At: d.DecidedAt}
		if preview > 0 && int(d.CommentLength) > preview {
			dec.Comment, dec.CommentTruncated = dec.Comment+"…", true
		}
		byID[d.ApprovalID] = append(byID[d.ApprovalID], dec)
	}
	out := make([]Approval, len(rows))
	for i, r := range rows {
		out[i] = Approval{
			TenantID: r.TenantID, ID: r.ID, RunID: r.RunID, Node: r.Node, Title: r.Title, Description: r.Description,
			Approvers: r.Approvers, MinApprovals: int(r.MinApprovals), Status: r.Status, ExpiresAt: r.ExpiresAt,
			CreatedAt: r.CreatedAt, DecidedAt: r.DecidedAt, Decisions: orNone(byID[r.ID]),
		}
	}
	return out, nil
}

// orNone turns nil into an empty slice (a NOT NULL array, a JSON []).
func orNone[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// limitOr bounds a list's length: 100 by default, at most 500.
func limitOr(n int) int {
	if n <= 0 {
		return 100
	}
	return min(n, 500)
}
