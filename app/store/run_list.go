package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// RunFilter narrows RunList; zero fields match everything.
type RunFilter struct {
	Status     string
	Definition string
	// Definitions, when not nil, keeps runs of any of these definitions
	// (a definition pattern resolved to keys); empty matches nothing.
	Definitions []string
	Subject     string
	ParentID    *uuid.UUID
	// Attributes must all be present in the run's search attributes.
	Attributes map[string]any
	// Query keeps runs whose id starts with it (hex digits, dashes
	// allowed) or whose subject starts with it.
	Query string
	// From keeps runs created at or after it.
	From time.Time
	// Before is the cursor: runs strictly older than this (created_at, id).
	Before *RunCursor
	Limit  int
}

// RunCursor is a position in the newest-first run order.
type RunCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// listArgs are the filter's query parameters, shared by the list's
// queries.
type listArgs struct {
	status, definition, subject, qSubject pgtype.Text
	definitions                           []string
	parent, qFrom, qTo                    uuid.NullUUID
	attributes                            []byte
	from                                  *time.Time
}

func (f RunFilter) args() (listArgs, error) {
	a := listArgs{
		status: nullText(f.Status), definition: nullText(f.Definition), subject: nullText(f.Subject),
		definitions: f.Definitions, parent: nullUUID(f.ParentID),
	}
	if f.Definitions != nil && len(f.Definitions) == 0 {
		a.definitions = []string{} // matches nothing, unlike nil
	}
	if len(f.Attributes) > 0 {
		raw, err := jsonvalue.Marshal(f.Attributes)
		if err != nil {
			return a, fmt.Errorf("encode attribute filter: %w", err)
		}
		a.attributes = raw
	}
	if !f.From.IsZero() {
		a.from = &f.From
	}
	if q := strings.TrimSpace(f.Query); q != "" {
		a.qSubject = pgtype.Text{String: likePrefix(q), Valid: true}
		if lo, hi, ok := IDPrefixRange(q); ok {
			a.qFrom, a.qTo = uuid.NullUUID{UUID: lo, Valid: true}, uuid.NullUUID{UUID: hi, Valid: true}
		}
	}
	return a, nil
}

// likePrefix is a LIKE pattern matching strings that start with s.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// IDPrefixRange is the range of run ids that start with prefix (hex
// digits, dashes ignored), or false when prefix is no id prefix.
func IDPrefixRange(prefix string) (lo, hi uuid.UUID, ok bool) {
	digits := strings.ToLower(strings.ReplaceAll(prefix, "-", ""))
	if len(digits) == 0 || len(digits) > 32 {
		return lo, hi, false
	}
	if _, err := hex.DecodeString(digits + strings.Repeat("0", len(digits)%2)); err != nil {
		return lo, hi, false
	}
	lo = uuid.MustParse(formatUUID(digits + strings.Repeat("0", 32-len(digits))))
	hi = uuid.MustParse(formatUUID(digits + strings.Repeat("f", 32-len(digits))))
	return lo, hi, true
}

func formatUUID(h string) string {
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// RunList lists a tenant's runs newest first, at most f.Limit of them.
func (s *Store) RunList(ctx context.Context, tenantID uuid.UUID, f RunFilter) ([]Run, error) {
	a, err := f.args()
	if err != nil {
		return nil, err
	}
	p := queries.RunListParams{
		TenantID: tenantID, Status: a.status, DefinitionKey: a.definition, DefinitionKeys: a.definitions,
		Subject: a.subject, ParentRunID: a.parent, Attributes: a.attributes, QSubject: a.qSubject,
		QIDFrom: a.qFrom, QIDTo: a.qTo, CreatedFrom: a.from, MaxRows: int32(f.Limit),
	}
	if f.Before != nil {
		p.BeforeCreatedAt = &f.Before.CreatedAt
		p.BeforeID = uuid.NullUUID{UUID: f.Before.ID, Valid: true}
	}
	rows, err := s.planned().RunList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runsFromRows(rows)
}

// RunListNewer lists the runs matching f just newer than after (f.Before,
// when set, bounds them from above), newest first: the page before a
// cursor. f.From is not needed: they are newer than after.
func (s *Store) RunListNewer(ctx context.Context, tenantID uuid.UUID, f RunFilter, after RunCursor) ([]Run, error) {
	a, err := f.args()
	if err != nil {
		return nil, err
	}
	p := queries.RunListNewerParams{
		TenantID: tenantID, Status: a.status, DefinitionKey: a.definition, DefinitionKeys: a.definitions,
		Subject: a.subject, ParentRunID: a.parent, Attributes: a.attributes, QSubject: a.qSubject,
		QIDFrom: a.qFrom, QIDTo: a.qTo, AfterCreatedAt: after.CreatedAt, AfterID: after.ID, MaxRows: int32(f.Limit),
	}
	if f.Before != nil {
		p.CreatedTo = &f.Before.CreatedAt
		p.CreatedToID = uuid.NullUUID{UUID: f.Before.ID, Valid: true}
	}
	rows, err := s.planned().RunListNewer(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list newer runs: %w", err)
	}
	out, err := runsFromRows(rows)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// RunCount counts the runs matching f (f.Before bounds them, f.Limit is
// ignored), at most max: a result of max means "max or more".
func (s *Store) RunCount(ctx context.Context, tenantID uuid.UUID, f RunFilter, max int) (int, error) {
	a, err := f.args()
	if err != nil {
		return 0, err
	}
	p := queries.RunCountParams{
		TenantID: tenantID, Status: a.status, DefinitionKey: a.definition, DefinitionKeys: a.definitions,
		Subject: a.subject, ParentRunID: a.parent, Attributes: a.attributes, QSubject: a.qSubject,
		QIDFrom: a.qFrom, QIDTo: a.qTo, CreatedFrom: a.from, MaxRows: int32(max),
	}
	if f.Before != nil {
		p.BeforeCreatedAt = &f.Before.CreatedAt
		p.BeforeID = uuid.NullUUID{UUID: f.Before.ID, Valid: true}
	}
	n, err := s.planned().RunCount(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return int(n), nil
}

func runsFromRows(rows []queries.Run) ([]Run, error) {
	out := make([]Run, len(rows))
	for i, r := range rows {
		var err error
		if out[i], err = runFromRow(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// customPlans runs each query as an unnamed statement, described and
// then executed, so Postgres plans it for its parameters every time. The
// list's queries are one statement for many shapes of filter (a NULL
// parameter filters nothing): a cached generic plan, which Postgres
// switches to after five runs of a named statement, would scan a
// million runs to answer a search that an index answers in a few rows.
type customPlans struct{ queries.DBTX }

func (c customPlans) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return c.DBTX.Query(ctx, sql, append([]any{pgx.QueryExecModeDescribeExec}, args...)...)
}

func (c customPlans) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.DBTX.QueryRow(ctx, sql, append([]any{pgx.QueryExecModeDescribeExec}, args...)...)
}

// planned is the store's queries run with custom plans.
func (s *Store) planned() *queries.Queries { return queries.New(customPlans{s.db}) }

// RunEstimate is the planner's estimate of how many runs match f: what
// a total past RunCount's cap shows, for the cost of a plan.
func (s *Store) RunEstimate(ctx context.Context, tenantID uuid.UUID, f RunFilter) (int, error) {
	a, err := f.args()
	if err != nil {
		return 0, err
	}
	p := queries.RunCountEstimateParams{
		TenantID: tenantID, Status: a.status, DefinitionKey: a.definition, DefinitionKeys: a.definitions,
		Subject: a.subject, ParentRunID: a.parent, Attributes: a.attributes, QSubject: a.qSubject,
		QIDFrom: a.qFrom, QIDTo: a.qTo, CreatedFrom: a.from,
	}
	if f.Before != nil {
		p.BeforeCreatedAt = &f.Before.CreatedAt
		p.BeforeID = uuid.NullUUID{UUID: f.Before.ID, Valid: true}
	}
	n, err := s.q.RunCountEstimate(ctx, p)
	if err != nil {
		return 0, fmt.Errorf("estimate runs: %w", err)
	}
	return int(n), nil
}
