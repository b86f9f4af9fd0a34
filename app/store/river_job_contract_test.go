package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/testdb"
)

// These tests pin what Ductor's statements against River's tables
// (river_job.go) assume of the River version in go.mod: the job states
// they name, the args keys they read, the columns they use, and the
// indexes Ductor's migrations drop or alter. A River upgrade that breaks
// one of these fails here rather than silently in production.

// moduleRoot is the repository's root, from this package's folder.
const moduleRoot = "../.."

// riverTableUse finds a statement that reads or writes one of River's
// tables.
var riverTableUse = regexp.MustCompile(`(?i)\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+river_[a-z_]+`)

// Every statement against River's tables is in river_job.go, and the
// contract tests see every one of them (store.RiverStatements).
func TestRiverStatementsAreAllInRiverJob(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot, path)
		if d.IsDir() && (rel == filepath.Join("db", "migrations") || strings.HasPrefix(d.Name(), ".") && rel != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			rel == filepath.Join("app", "store", "river_job.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := riverTableUse.Find(src); m != nil {
			t.Errorf("%s has a statement against River's tables (%q): it belongs in app/store/river_job.go", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range riverConsts(t) {
		if _, ok := store.RiverStatements[name]; !ok {
			t.Errorf("river_job.go's %s is not in store.RiverStatements: the contract tests do not see it", name)
		}
	}
}

// riverConsts names the constants of river_job.go whose own text names
// one of River's tables.
func riverConsts(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "river_job.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			ast.Inspect(v, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && riverTableUse.MatchString(lit.Value) {
					for _, id := range v.Names {
						names = append(names, id.Name)
					}
					return false
				}
				return true
			})
		}
	}
	if len(names) == 0 {
		t.Fatal("found no statement in river_job.go")
	}
	return names
}

var (
	stateIs   = regexp.MustCompile(`\bstate\s*(?:=|<>|!=)\s*'(\w+)'`)
	stateIn   = regexp.MustCompile(`\bstate\s+(NOT\s+)?IN\s*\(([^)]*)\)`)
	quoted    = regexp.MustCompile(`'(\w+)'`)
	finalized = regexp.MustCompile(`finalized_at IS NOT NULL\)*\s+AND\s+\(*state\s*(?:=\s*ANY\s*\(ARRAY\[|IN\s*\()([^\])]*)`)
)

// The job states the statements name are River's, and the states they
// take as finished (NOT IN (...)) are exactly those River finalizes.
func TestRiverJobStatesAreRivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := testdb.Tx(t)
	rivers := map[string]bool{}
	for _, s := range rivertype.JobStates() {
		rivers[string(s)] = true
	}
	var enum []string
	if err := tx.QueryRow(ctx, `SELECT enum_range(NULL::river_job_state)::text[]`).Scan(&enum); err != nil {
		t.Fatal(err)
	}
	if got, want := sorted(enum), sorted(keys(rivers)); !slices.Equal(got, want) {
		t.Errorf("river_job_state is %v, rivertype.JobStates() %v", got, want)
	}
	var check string
	if err := tx.QueryRow(ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'river_job'::regclass AND conname = 'finalized_or_finalized_at_null'`).Scan(&check); err != nil {
		t.Fatalf("River's check of finalized states: %v", err)
	}
	fin := finalized.FindStringSubmatch(check)
	if fin == nil {
		t.Fatalf("cannot read River's finalized states from %s", check)
	}
	finished := sorted(quotedIn(fin[1]))
	if want := sorted([]string{string(rivertype.JobStateCompleted), string(rivertype.JobStateCancelled), string(rivertype.JobStateDiscarded)}); !slices.Equal(finished, want) {
		t.Errorf("River finalizes %v, rivertype names %v", finished, want)
	}
	for name, sql := range store.RiverStatements {
		for _, m := range stateIs.FindAllStringSubmatch(sql, -1) {
			if !rivers[m[1]] {
				t.Errorf("%s names the job state %q, not one of River's %v", name, m[1], rivertype.JobStates())
			}
		}
		for _, m := range stateIn.FindAllStringSubmatch(sql, -1) {
			states := quotedIn(m[2])
			for _, s := range states {
				if !rivers[s] {
					t.Errorf("%s names the job state %q, not one of River's %v", name, s, rivertype.JobStates())
				}
			}
			if m[1] != "" && !slices.Equal(sorted(states), finished) {
				t.Errorf("%s takes %v as finished, River finalizes %v", name, sorted(states), finished)
			}
		}
	}
}

var (
	kindNamed = regexp.MustCompile(`'(ductor\.\w+)'`)
	kindLike  = regexp.MustCompile(`kind LIKE '([\w.]+)%'`)
	argRead   = regexp.MustCompile(`\b(?:args|m\.a)\s*->>?\s*'(\w+)'`)
	argHas    = regexp.MustCompile(`\b(?:args|m\.a)\s*\?\s*'(\w+)'`)
)

// The args keys the statements read are JSON keys of Ductor's job args,
// of the kinds each statement names: a value read (->>, ->) is a key of
// every kind it names, a key tested (?) of one of them at least. The kinds
// are those of Ductor's job args.
func TestRiverJobArgsKeysAreDuctors(t *testing.T) {
	t.Parallel()
	tags := map[string]map[string]bool{
		shell.TickArgs{}.Kind(): jsonKeys(reflect.TypeFor[shell.TickArgs]()),
		shell.StepArgs{}.Kind(): jsonKeys(reflect.TypeFor[shell.StepArgs]()),
	}
	for name, sql := range store.RiverStatements {
		var kinds []string
		for _, m := range kindNamed.FindAllStringSubmatch(sql, -1) {
			if tags[m[1]] == nil {
				t.Errorf("%s names the job kind %q, not one of Ductor's job args", name, m[1])
				continue
			}
			kinds = append(kinds, m[1])
		}
		for _, m := range kindLike.FindAllStringSubmatch(sql, -1) {
			for k := range tags {
				if !strings.HasPrefix(k, m[1]) {
					t.Errorf("%s finds Ductor's jobs by kind LIKE '%s%%', which misses %s", name, m[1], k)
				}
			}
		}
		if len(kinds) == 0 {
			kinds = keys(tags)
		}
		for _, m := range argRead.FindAllStringSubmatch(sql, -1) {
			for _, k := range kinds {
				if !tags[k][m[1]] {
					t.Errorf("%s reads args key %q, which %s's args do not have", name, m[1], k)
				}
			}
		}
		for _, m := range argHas.FindAllStringSubmatch(sql, -1) {
			if !slices.ContainsFunc(kinds, func(k string) bool { return tags[k][m[1]] }) {
				t.Errorf("%s tests args key %q, which none of %v's args have", name, m[1], kinds)
			}
		}
	}
}

// jsonKeys are the JSON keys of a job args struct's fields.
func jsonKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// riverJobColumns are the columns of river_job Ductor's statements use,
// with River's types for them.
var riverJobColumns = map[string]string{
	"id":           "bigint",
	"kind":         "text",
	"state":        "river_job_state",
	"args":         "jsonb",
	"metadata":     "jsonb",
	"errors":       "jsonb[]",
	"queue":        "text",
	"priority":     "smallint",
	"attempt":      "smallint",
	"created_at":   "timestamp with time zone",
	"scheduled_at": "timestamp with time zone",
	"attempted_at": "timestamp with time zone",
	"finalized_at": "timestamp with time zone",
}

var word = regexp.MustCompile(`[a-z_]+`)

// The columns of river_job the statements use are River's, of the types
// pinned; every statement prepares against River's schema; and a
// statement that comes to use another column of river_job must pin it.
func TestRiverJobColumnsAreRivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tx := testdb.Tx(t)
	rows, err := tx.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = 'river_job'::regclass AND attnum > 0 AND NOT attisdropped`)
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		cols[name] = typ
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for c, typ := range riverJobColumns {
		if cols[c] != typ {
			t.Errorf("river_job.%s is %q in River's schema, Ductor's statements take it as %s", c, cols[c], typ)
		}
	}
	for name, sql := range store.RiverStatements {
		for _, w := range word.FindAllString(sql, -1) {
			if _, used := cols[w]; used && riverJobColumns[w] == "" {
				t.Errorf("%s uses river_job.%s, which riverJobColumns does not pin", name, w)
			}
		}
		if err := prepares(ctx, tx, sql); err != nil {
			t.Errorf("%s does not prepare against River's schema: %v", name, err)
		}
	}
}

// prepares parses and plans sql in a savepoint of tx, which it rolls
// back, so that one statement's failure leaves tx usable.
func prepares(ctx context.Context, tx pgx.Tx, sql string) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = sp.Rollback(ctx) }()
	_, err = sp.Prepare(ctx, "", sql)
	return err
}

var (
	indexNamed   = regexp.MustCompile(`(?i)\b(DROP|ALTER)\s+INDEX\s+(?:IF\s+EXISTS\s+)?(river_\w+)`)
	indexCreated = regexp.MustCompile(`(?i)\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:CONCURRENTLY\s+)?(?:IF\s+NOT\s+EXISTS\s+)?(river_\w+)`)
)

// The River indexes Ductor's migrations drop or alter are River's own, as
// River's migrations create them; those dropped stay gone after every
// migration, and River's other indexes of river_job stay as River made
// them.
func TestRiverIndexesDuctorDropsAreRivers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	named, dropped, own := map[string]string{}, map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob(filepath.Join(moduleRoot, "db", "migrations", "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range indexCreated.FindAllSubmatch(src, -1) {
			own[string(m[1])] = true
		}
		for _, m := range indexNamed.FindAllSubmatch(src, -1) {
			named[string(m[2])] = filepath.Base(f)
			if strings.EqualFold(string(m[1]), "DROP") {
				dropped[string(m[2])] = true
			}
		}
	}
	if len(dropped) == 0 {
		t.Fatal("found no River index that Ductor's migrations drop")
	}
	rivers := riverOnlyIndexes(t)
	for n, file := range named {
		if !own[n] && !rivers[n] {
			t.Errorf("%s names the index %s, which River's migrations do not create", file, n)
		}
	}
	var after []string
	tx := testdb.Tx(t)
	rows, err := tx.Query(ctx, `SELECT indexname::text FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'river_job'`)
	if err != nil {
		t.Fatal(err)
	}
	if after, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	for n := range rivers {
		if gone := !slices.Contains(after, n); gone != dropped[n] {
			t.Errorf("after every migration, River's index %s is gone: %v, dropped by Ductor: %v", n, gone, dropped[n])
		}
	}
	for _, n := range river.ReindexerIndexNamesDefault() {
		if !rivers[n] && strings.HasPrefix(n, "river_job") {
			t.Errorf("River reindexes %s, which its migrations do not create", n)
		}
	}
}

// riverOnlyIndexes runs River's migrations alone in a schema of their own
// and returns the indexes they create on river_job.
func riverOnlyIndexes(t *testing.T) map[string]bool {
	t.Helper()
	ctx := context.Background()
	pool := testdb.Pool(t)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "river_only_" + hex.EncodeToString(b)
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		t.Fatalf("River's migrations: %v", err)
	}
	rows, err := pool.Query(ctx, `SELECT indexname::text FROM pg_indexes WHERE schemaname = $1 AND tablename = 'river_job'`, schema)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	if len(out) == 0 {
		t.Fatal("River's migrations made no index on river_job")
	}
	return out
}

func quotedIn(list string) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(list, -1) {
		out = append(out, m[1])
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
