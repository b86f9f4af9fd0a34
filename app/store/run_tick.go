package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// A tick reads and writes several runs with one statement per kind of row:
// a step worker hands its result to a group tick that takes every result
// ready at that moment, so a busy process pays a statement per group rather
// than per step. One run is a group of one.

// RunKey names a run.
type RunKey struct {
	TenantID, ID uuid.UUID
}

// splitKeys lists the distinct tenants and runs of keys, for queries
// that match tenant_id = ANY(tenants) AND id = ANY(ids): one index scan,
// where a list of pairs plans as a join. Callers keep only the rows of
// pairs they asked for (asked).
func splitKeys(keys []RunKey) (tenants, ids []uuid.UUID, asked map[RunKey]bool) {
	asked = make(map[RunKey]bool, len(keys))
	seen := map[uuid.UUID]bool{}
	for _, k := range keys {
		if asked[k] {
			continue
		}
		asked[k] = true
		ids = append(ids, k.ID)
		if !seen[k.TenantID] {
			seen[k.TenantID] = true
			tenants = append(tenants, k.TenantID)
		}
	}
	return tenants, ids, asked
}

// TickLoad is what a tick reads of a run it has locked.
type TickLoad struct {
	LeanRun
	Nodes   []*engine.Node // the manifest-step nodes
	Pending PendingInputs
	// TickRequested tells whether a tick job is on its way.
	TickRequested bool
	// Cached reports a run read at the record version its caller holds
	// (RunTickLoadCached): Run.State and Nodes are left empty, the
	// caller's to fill in.
	Cached bool
}

// RunTickLoad locks the runs of keys that no other transaction holds and
// then reads what a tick needs of each (see TickLoad); runs it could not
// lock (or that do not exist) are missing from the result. A run's input
// (which never changes) is read only when withInput holds its id, already
// decoded; otherwise the caller has it cached.
//
// Lock first, then read: the runs are locked by one statement and read by
// the next (RunTickLock, RunTickRead), both sent in one round trip, so
// what the tick decides on comes from a snapshot taken while it holds the
// locks, never from before another tick's commit.
func (s *Store) RunTickLoad(ctx context.Context, keys []RunKey, withInput []uuid.UUID) (map[RunKey]TickLoad, error) {
	return s.RunTickLoadCached(ctx, keys, withInput, nil)
}

// RunTickLoadCached is RunTickLoad for a caller that holds some runs'
// state and step nodes as a record version committed them (cached): a
// run still at that version comes back Cached, without them, since every
// write of a run's state or step nodes moves its version. Under
// SameStatementTickLoad nothing is taken as cached, as the old load did.
func (s *Store) RunTickLoadCached(ctx context.Context, keys []RunKey, withInput []uuid.UUID, cached map[RunKey]int64) (map[RunKey]TickLoad, error) {
	return s.runTickLoad(ctx, keys, withInput, cached, true)
}

func (s *Store) runTickLoad(ctx context.Context, keys []RunKey, withInput []uuid.UUID, cached map[RunKey]int64, lock bool) (map[RunKey]TickLoad, error) {
	tenants, ids, asked := splitKeys(keys)
	if withInput == nil {
		withInput = []uuid.UUID{}
	}
	c := cachedVersions{ids: []uuid.UUID{}, versions: []int64{}}
	if !s.opts.sameStatementTickLoad {
		for k, v := range cached {
			if asked[k] {
				c.ids, c.versions = append(c.ids, k.ID), append(c.versions, v)
			}
		}
	}
	rows, err := s.tickRows(ctx, tenants, ids, withInput, c, lock)
	if err != nil {
		return nil, fmt.Errorf("load runs: %w", err)
	}
	out := make(map[RunKey]TickLoad, len(rows))
	for _, r := range rows {
		k := RunKey{r.TenantID, r.ID}
		if !asked[k] {
			continue
		}
		l, err := tickLoadFromRow(r)
		if err != nil {
			return nil, err
		}
		if l.Cached && cached[k] != r.RecordVersion {
			return nil, fmt.Errorf("run %s: read without its state at version %d, not the cached %d", r.ID, r.RecordVersion, cached[k])
		}
		out[k] = l
	}
	return out, nil
}

// RunTickPeek reads what RunTickLoadCached reads, for the runs of keys
// that exist, without locking them and outside any transaction the
// caller holds (s on a pool): a tick job reads, decides with no
// transaction open, and then locks its run and persists only if the run's
// record_version is still the one read here (see RunLockVersion and the
// guard of RunWritesFlush). The read is one statement, so the run, its
// step nodes and its inputs come from one snapshot.
func (s *Store) RunTickPeek(ctx context.Context, keys []RunKey, withInput []uuid.UUID, cached map[RunKey]int64) (map[RunKey]TickLoad, error) {
	return s.runTickLoad(ctx, keys, withInput, cached, false)
}

// SameStatementTickLoad makes the store's RunTickLoad lock and read in
// one statement, as it once did (RunTickLoadSameStatement), which lets a
// tick decide on nodes and inputs older than the run row it locked. Only
// the concurrency checker's workers use it, to show that the checker finds
// the lost updates this allows.
func SameStatementTickLoad() Option {
	return func(o *options) { o.sameStatementTickLoad = true }
}

// LocksAsItReads reports whether s was made with SameStatementTickLoad.
func (s *Store) LocksAsItReads() bool { return s.opts.sameStatementTickLoad }

// cachedVersions are the runs a caller holds, with their record versions.
type cachedVersions struct {
	ids      []uuid.UUID
	versions []int64
}

// tickRows sends RunTickLock and RunTickRead in one round trip; without
// lock, RunTickRead reads the runs of ids unlocked (tickUnlocked names
// them for it instead of RunTickLock).
func (s *Store) tickRows(ctx context.Context, tenants, ids, withInput []uuid.UUID, c cachedVersions, lock bool) ([]queries.RunTickReadRow, error) {
	max := int32(maxInputsPerTick + 1)
	if lock && s.opts.sameStatementTickLoad {
		return s.tickRowsSameStatement(ctx, tenants, ids, withInput, max)
	}
	p := &readAfter{db: s.db}
	q := queries.New(p)
	if lock {
		_ = q.RunTickLock(ctx, queries.RunTickLockParams{TenantIds: tenants, Ids: ids})
	} else {
		p.batch.Queue(tickUnlocked, ids)
	}
	return q.RunTickRead(ctx, queries.RunTickReadParams{
		TenantIds: tenants, WithInputIds: withInput, MaxInputs: max, CachedIds: c.ids, CachedVersions: c.versions,
	})
}

// tickUnlocked names the runs RunTickRead is to read without locking
// them. The setting is local to the statements' transaction: on a pool,
// the implicit one of their round trip.
const tickUnlocked = `SELECT set_config('ductor.tick_locked', array_to_string($1::uuid[], ','), true)`

func (s *Store) tickRowsSameStatement(ctx context.Context, tenants, ids, withInput []uuid.UUID, max int32) ([]queries.RunTickReadRow, error) {
	rows, err := s.q.RunTickLoadSameStatement(ctx, queries.RunTickLoadSameStatementParams{
		TenantIds: tenants, Ids: ids, WithInputIds: withInput, MaxInputs: max,
		CachedIds: []uuid.UUID{}, CachedVersions: []int64{},
	})
	out := make([]queries.RunTickReadRow, len(rows))
	for i, r := range rows {
		out[i] = queries.RunTickReadRow(r)
	}
	return out, err
}

func tickLoadFromRow(r queries.RunTickReadRow) (TickLoad, error) {
	cached := r.State == nil
	if cached {
		r.State = []byte("{}") // the caller's
	}
	run, err := runFromRow(queries.Run{
		TenantID: r.TenantID, ID: r.ID, DefinitionKey: r.DefinitionKey, DefinitionVersion: r.DefinitionVersion,
		ManifestHash: r.ManifestHash, Status: r.Status, Reason: r.Reason, Subject: r.Subject,
		SearchAttributes: r.SearchAttributes, ParentRunID: r.ParentRunID, RootRunID: r.RootRunID, Depth: r.Depth,
		ContinuedFromRunID: r.ContinuedFromRunID, ContinuedToRunID: r.ContinuedToRunID,
		IdempotencyKey: r.IdempotencyKey, State: r.State, TransitionCount: r.TransitionCount,
		RecordVersion: r.RecordVersion, TickRequested: r.TickRequested, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt,
	})
	if err != nil {
		return TickLoad{}, err
	}
	l := TickLoad{LeanRun: LeanRun{Run: run, Input: r.Input, Now: r.Now.UTC()}, TickRequested: r.TickRequested, Cached: cached}
	if cached {
		l.Run.State = engine.Run{}
	} else if l.Nodes, err = decodeNodes(r.Nodes); err != nil {
		return TickLoad{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	if l.Pending, err = decodePending(r.Inputs); err != nil {
		return TickLoad{}, fmt.Errorf("run %s: %w", r.ID, err)
	}
	return l, nil
}

func decodeNodes(raw []byte) ([]*engine.Node, error) {
	var nodes []*engine.Node
	if err := jsonvalue.Unmarshal(raw, &nodes); err != nil {
		return nil, fmt.Errorf("decode nodes: %w", err)
	}
	return nodes, nil
}

// decodePending decodes a tick's undrained inputs, of which there may be
// one more than a tick takes: that one only reports More.
func decodePending(raw []byte) (PendingInputs, error) {
	var rows []struct {
		ID      int64           `json:"id"`
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := jsonvalue.Unmarshal(raw, &rows); err != nil {
		return PendingInputs{}, fmt.Errorf("decode inputs: %w", err)
	}
	var p PendingInputs
	if len(rows) > maxInputsPerTick {
		rows, p.More = rows[:maxInputsPerTick], true
	}
	for _, r := range rows {
		in, err := decodeInput(r.Kind, r.Payload)
		if err != nil {
			return PendingInputs{}, fmt.Errorf("input %d: %w", r.ID, err)
		}
		p.IDs = append(p.IDs, r.ID)
		p.Inputs = append(p.Inputs, in)
	}
	return p, nil
}

// RunWrites collects what ticks of one or more runs write, to send with
// one statement per kind of row (Store.RunWritesFlush). A row that a
// statement would touch twice (the same node saved by two decisions of one
// tick) starts a new statement, so later writes still win.
type RunWrites struct {
	nodes    []nodeRows
	attempts []attemptRows
	history  queries.RunHistoryInsertManyParams
	consume  queries.RunInputConsumeManyParams
	updates  queries.RunUpdateManyParams
	after    []statement
}

type statement struct {
	sql  string
	args []any
}

// After adds a statement without rows to send last, in the same round
// trip (a notification, say).
func (w *RunWrites) After(sql string, args ...any) {
	w.after = append(w.after, statement{sql, args})
}

// nodeBatch bounds one node statement: a 10,000-way scatter is written in
// ten.
const nodeBatch = 1000

type nodeRows struct {
	p    queries.RunNodeUpsertManyParams
	seen map[nodeKey]bool
}

type nodeKey struct {
	run  RunKey
	node string
}

type attemptRows struct {
	p    queries.RunAttemptUpsertManyParams
	seen map[attemptKey]bool
}

type attemptKey struct {
	run                 RunKey
	node                string
	generation, attempt int
}

// Decision adds what one decision changed about nodes, attempts and
// history.
func (w *RunWrites) Decision(r Run, d *engine.Decision) error {
	k := RunKey{r.TenantID, r.ID}
	if err := w.Nodes(k, d.Nodes); err != nil {
		return err
	}
	if err := w.attemptsAdd(k, r.DefinitionKey, d.Attempts); err != nil {
		return err
	}
	h := &w.history
	for _, t := range d.Transitions {
		h.TenantIds = append(h.TenantIds, k.TenantID)
		h.RunIds = append(h.RunIds, k.ID)
		h.DefinitionKeys = append(h.DefinitionKeys, r.DefinitionKey)
		h.Seqs = append(h.Seqs, t.Seq)
		h.Ats = append(h.Ats, t.At)
		h.Nodes = append(h.Nodes, t.Node)
		h.FromStates = append(h.FromStates, t.From)
		h.ToStates = append(h.ToStates, t.To)
		h.Generations = append(h.Generations, int32(t.Generation))
		h.Attempts = append(h.Attempts, int32(t.Attempt))
		h.Details = append(h.Details, t.Detail)
	}
	return nil
}

// Nodes adds changed and new nodes. Node ids are deterministic (REF,
// REF[KEY]), so a re-executed tick rewrites the same rows and creates none
// twice.
func (w *RunWrites) Nodes(k RunKey, nodes []*engine.Node) error {
	for _, n := range nodes {
		data, err := jsonvalue.Marshal(n)
		if err != nil {
			return fmt.Errorf("encode node %s: %w", n.ID, err)
		}
		key := nodeKey{k, n.ID}
		last := len(w.nodes) - 1
		if last < 0 || w.nodes[last].seen[key] || len(w.nodes[last].p.Nodes) == nodeBatch {
			w.nodes = append(w.nodes, nodeRows{seen: map[nodeKey]bool{}})
			last++
		}
		b := &w.nodes[last]
		b.seen[key] = true
		scatter, index := "", int32(-1)
		if n.Child != nil {
			scatter, index = n.Child.Scatter, int32(n.Child.Index)
		}
		p := &b.p
		p.TenantIds = append(p.TenantIds, k.TenantID)
		p.RunIds = append(p.RunIds, k.ID)
		p.Nodes = append(p.Nodes, n.ID)
		p.Refs = append(p.Refs, n.Ref)
		p.States = append(p.States, string(n.State))
		p.Scatters = append(p.Scatters, scatter)
		p.ChildIndexes = append(p.ChildIndexes, index)
		p.Datas = append(p.Datas, string(data))
	}
	return nil
}

func (w *RunWrites) attemptsAdd(k RunKey, definition string, attempts []engine.Attempt) error {
	for _, a := range attempts {
		out, err := jsonOrEmpty(a.Output)
		if err != nil {
			return fmt.Errorf("encode output of %s: %w", a.Node, err)
		}
		errJSON, err := jsonOrEmpty(a.Error)
		if err != nil {
			return fmt.Errorf("encode error of %s: %w", a.Node, err)
		}
		key := attemptKey{k, a.Node, a.Generation, a.Attempt}
		last := len(w.attempts) - 1
		if last < 0 || w.attempts[last].seen[key] {
			w.attempts = append(w.attempts, attemptRows{seen: map[attemptKey]bool{}})
			last++
		}
		b := &w.attempts[last]
		b.seen[key] = true
		p := &b.p
		p.TenantIds = append(p.TenantIds, k.TenantID)
		p.RunIds = append(p.RunIds, k.ID)
		p.Nodes = append(p.Nodes, a.Node)
		p.Generations = append(p.Generations, int32(a.Generation))
		p.Attempts = append(p.Attempts, int32(a.Attempt))
		p.StartedAts = append(p.StartedAts, a.StartedAt)
		p.FinishedAts = append(p.FinishedAts, a.FinishedAt)
		p.Outputs = append(p.Outputs, out)
		p.Errors = append(p.Errors, errJSON)
		p.StepTypes = append(p.StepTypes, a.Type)
		p.DefinitionKeys = append(p.DefinitionKeys, definition)
	}
	return nil
}

// Consume marks a run's drained inputs consumed.
func (w *RunWrites) Consume(k RunKey, ids []int64) {
	for _, id := range ids {
		w.consume.TenantIds = append(w.consume.TenantIds, k.TenantID)
		w.consume.RunIds = append(w.consume.RunIds, k.ID)
		w.consume.Ids = append(w.consume.Ids, id)
	}
}

// Update writes the engine's run state guarded by the record version that
// was read: the flush returns ErrConflict when any run's guard fails.
func (w *RunWrites) Update(r Run, st engine.Run) error {
	state, err := encodeState(st)
	if err != nil {
		return err
	}
	u := &w.updates
	u.TenantIds = append(u.TenantIds, r.TenantID)
	u.Ids = append(u.Ids, r.ID)
	u.RecordVersions = append(u.RecordVersions, r.RecordVersion)
	u.Statuses = append(u.Statuses, string(st.Status))
	u.Reasons = append(u.Reasons, string(st.Reason))
	u.States = append(u.States, string(state))
	u.TransitionCounts = append(u.TransitionCounts, st.TransitionCount)
	u.ContinuedToRunIds = append(u.ContinuedToRunIds, st.ContinuedToRunID)
	u.FinishedAts = append(u.FinishedAts, st.FinishedAt)
	return nil
}

// RunWritesFlush sends everything collected (nodes, attempts, history,
// consumed inputs, the guarded run updates and the statements to send
// after them) in one round trip, and forgets it. It returns ErrConflict
// when a run's version moved on since it was read, or an input it
// consumes was consumed already.
func (s *Store) RunWritesFlush(ctx context.Context, w *RunWrites) error {
	var p pipeline
	q := queries.New(&p)
	for _, b := range w.nodes {
		_ = q.RunNodeUpsertMany(ctx, b.p)
	}
	for _, b := range w.attempts {
		_ = q.RunAttemptUpsertMany(ctx, b.p)
	}
	if len(w.history.Seqs) > 0 {
		_ = q.RunHistoryInsertMany(ctx, w.history)
	}
	consume, inputs := -1, len(w.consume.Ids)
	if inputs > 0 {
		consume = p.batch.Len()
		_, _ = q.RunInputConsumeMany(ctx, w.consume)
	}
	update, runs := -1, len(w.updates.Ids)
	if runs > 0 {
		update = p.batch.Len()
		_, _ = q.RunUpdateMany(ctx, w.updates)
	}
	for _, st := range w.after {
		p.batch.Queue(st.sql, st.args...)
	}
	*w = RunWrites{}
	if p.batch.Len() == 0 {
		return nil
	}
	results := s.db.SendBatch(ctx, &p.batch)
	for i := range p.batch.Len() {
		tag, err := results.Exec()
		if err != nil {
			_ = results.Close()
			return fmt.Errorf("write run records: %w", err)
		}
		if (i == update && tag.RowsAffected() != int64(runs)) || (i == consume && tag.RowsAffected() != int64(inputs)) {
			_ = results.Close()
			return ErrConflict
		}
	}
	if err := results.Close(); err != nil {
		return fmt.Errorf("write run records: %w", err)
	}
	return nil
}

// pipeline stands in for a connection under sqlc's queries and queues
// their statements in a batch, to send together. Only statements without
// rows (:exec, :execrows) can be queued; their results are read from the
// batch.
type pipeline struct {
	batch pgx.Batch
}

func (p *pipeline) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	p.batch.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

var errPipelineRows = errors.New("store: a pipeline queues statements; it returns no rows")

func (p *pipeline) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errPipelineRows
}

func (p *pipeline) QueryRow(context.Context, string, ...any) pgx.Row { return errRow{} }

type errRow struct{}

func (errRow) Scan(...any) error { return errPipelineRows }

// readAfter is a pipeline that ends with a query: the statements queued
// before it and the query go in one batch, one round trip, and the query's
// rows come back. Each statement still runs on its own, with a snapshot of
// its own under READ COMMITTED.
type readAfter struct {
	pipeline
	db DB
}

func (r *readAfter) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	r.batch.Queue(sql, args...)
	results := r.db.SendBatch(ctx, &r.batch)
	for range r.batch.Len() - 1 {
		if _, err := results.Exec(); err != nil {
			_ = results.Close()
			return nil, err
		}
	}
	rows, err := results.Query()
	if err != nil {
		_ = results.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, results: results}, nil
}

// batchRows closes its batch with its rows.
type batchRows struct {
	pgx.Rows
	results pgx.BatchResults
	closed  bool
}

func (b *batchRows) Close() {
	b.Rows.Close()
	if !b.closed {
		b.closed = true
		_ = b.results.Close()
	}
}

// RunNodesUpsert writes changed and new nodes of one run.
func (s *Store) RunNodesUpsert(ctx context.Context, tenantID, runID uuid.UUID, nodes []*engine.Node) error {
	var w RunWrites
	if err := w.Nodes(RunKey{tenantID, runID}, nodes); err != nil {
		return err
	}
	return s.RunWritesFlush(ctx, &w)
}

// RunInputsArrived reports whether the run has an unconsumed input that a
// tick's read did not see: one not among read and, when the read left
// more behind (more), newer than the newest it took. A tick that read its
// run unlocked and decided to end it asks this under the run's lock: an
// input delivered between the read and the lock would otherwise be left
// on a run that drains nothing more (a signal, say, that its sender
// decided the run was live for).
func (s *Store) RunInputsArrived(ctx context.Context, tenantID, runID uuid.UUID, read []int64, more bool) (bool, error) {
	var after int64
	if more {
		for _, id := range read {
			after = max(after, id)
		}
	}
	if read == nil {
		read = []int64{}
	}
	var arrived bool
	err := s.db.QueryRow(ctx, runInputsArrived, tenantID, runID, read, after).Scan(&arrived)
	if err != nil {
		return false, fmt.Errorf("inputs arrived: %w", err)
	}
	return arrived, nil
}

const runInputsArrived = `SELECT EXISTS (SELECT 1 FROM run_input
    WHERE tenant_id = $1 AND run_id = $2 AND consumed_at IS NULL AND id <> ALL($3::bigint[]) AND id > $4)`

// RunLocked is a run's row as a tick that read it unlocked finds it once
// it holds the lock (RunTickLockFree).
type RunLocked struct {
	RecordVersion int64
	TickRequested bool
}

// RunTickLockFree locks the runs of keys that no other transaction holds,
// without waiting, and returns their record versions and wake flags; the
// runs it could not lock are missing. A group tick that read and decided
// its runs unlocked (RunTickPeek) persists those still at the version it
// read.
func (s *Store) RunTickLockFree(ctx context.Context, keys []RunKey) (map[RunKey]RunLocked, error) {
	tenants, ids, asked := splitKeys(keys)
	rows, err := s.db.Query(ctx, runTickLockFree, tenants, ids)
	if err != nil {
		return nil, fmt.Errorf("lock runs: %w", err)
	}
	defer rows.Close()
	out := make(map[RunKey]RunLocked, len(keys))
	for rows.Next() {
		var k RunKey
		var l RunLocked
		if err := rows.Scan(&k.TenantID, &k.ID, &l.RecordVersion, &l.TickRequested); err != nil {
			return nil, fmt.Errorf("lock runs: %w", err)
		}
		if asked[k] {
			out[k] = l
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lock runs: %w", err)
	}
	return out, nil
}

const runTickLockFree = `SELECT r.tenant_id, r.id, r.record_version, r.tick_requested FROM run r
WHERE r.tenant_id = ANY($1::uuid[]) AND r.id = ANY($2::uuid[])
ORDER BY r.tenant_id, r.id
FOR NO KEY UPDATE OF r SKIP LOCKED`
