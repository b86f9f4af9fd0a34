package docs

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/config"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/shell"
	"github.com/ductor/ductor/app/steps"
	"github.com/ductor/ductor/app/store"
)

// The rows of limits.md give the values the code has: a constant that
// changes fails this test until the page says the new value.
func TestLimitsPageMatchesCode(t *testing.T) {
	t.Parallel()
	page := readPage(t, "limits.md")
	for _, c := range []struct{ row, value string }{
		{"Document size", mib(definition.MaxDocumentBytes)},
		{"Steps", thousands(definition.MaxSteps)},
		{"Edges", thousands(definition.MaxEdges)},
		{"Triggers", thousands(definition.MaxTriggers)},
		{"Concurrency rules", thousands(definition.MaxConcurrencyRules)},
		{"A flow-control rule's `limit`", "1 to " + thousands(definition.MaxFlowLimit)},
		{"A step's `retry.max_attempts`", "(default " + thousands(definition.DefaultMaxAttempts) + ")"},
		{"A step's `retry.backoff`", "(default " + strconv.FormatFloat(definition.DefaultBackoff, 'g', -1, 64) + ")"},
		{"A repeating subworkflow's `max_iterations`", "1 to " + thousands(definition.MaxIterations)},
		{"An expression's length", thousands(expr.DefaultMaxLength) + " characters"},
		{"An expression's nesting", thousands(expr.DefaultMaxNesting) + " levels; macros (`map`, `filter`, …) " + thousands(expr.DefaultComprehensionNesting) + " deep"},
		{"An expression's estimated cost", thousands(expr.DefaultCostLimit)},
		{"YAML aliases expanded", thousands(definition.MaxAliasValues) + " values"},
		{"A step's attempt", seconds(definition.DefaultTimeout)},
		{"An expression's evaluation", thousands(expr.DefaultCostLimit) + " cost units, " + seconds(expr.DefaultTimeLimit)},
		{"A node's output, the run's output, a signal's payload, an event's data, a case's data", mib(engine.DefaultMaxOutputBytes)},
		{"An `http` step's response body", mib(steps.DefaultMaxResponseBytes)},
		{"Inline children of a scatter", thousands(definition.DefaultMaxInlineChildren) + " | `max_inline_children` of the step (at most " + thousands(definition.HardMaxInlineChildren) + ")"},
		{"Children of a `child_workflow` scatter", thousands(engine.MaxChildren)},
		{"Subworkflow nesting", thousands(shell.MaxDepth) + " deep"},
		{"Signals a run holds that no step has taken", thousands(engine.DefaultMaxBufferedSignals)},
		{"Transitions of a run", "warning at " + thousands(definition.DefaultTransitionsSoft) + ", ContinueAsNew at " + thousands(definition.DefaultTransitionsHard) + ", stop at " + thousands(definition.DefaultTransitionsTerminate)},
		{"Time a task waits for a worker", "5 minutes"},
		{"Retention of finished runs", "30 days"},
		{"Runs that the tenant's bulk operations still have to act on", thousands(runs.DefaultBatchQueueMax)},
		{"Runs one bulk operation covers", thousands(runs.MaxBatchRuns)},
		{"A schedule backfill's times", thousands(runs.MaxBackfill) + " with `DUCTOR_API_RATE=0`"},
		{"An approval decision's comment", kib(store.MaxCommentBytes)},
	} {
		row := pageRow(page, c.row)
		if row == "" {
			t.Errorf("limits.md has no row %q", c.row)
			continue
		}
		if !strings.Contains(row, c.value) {
			t.Errorf("limits.md's row %q does not say %q:\n%s", c.row, c.value, row)
		}
	}
	cfg, _, err := config.Load(flag.NewFlagSet("serve", flag.ContinueOnError), nil, func(string) string { return "" }, ":8080")
	if err != nil {
		t.Fatal(err)
	}
	for row, value := range map[string]string{
		"API requests a key may make":                        fmt.Sprintf("%g a second, bursts of %g", cfg.APIRate, 2*cfg.APIRate),
		"Ready steps of one tenant that one job carries":     strconv.Itoa(cfg.StepBatch),
		"A step's attempt without a result past its timeout": seconds(cfg.RescueWindow),
		"Coordinator's prune of finished runs":               map[time.Duration]string{time.Minute: "every minute"}[cfg.PruneInterval],
	} {
		if r := pageRow(page, row); value == "" || !strings.Contains(r, "| "+value) {
			t.Errorf("limits.md's row %q does not give the default %q:\n%s", row, value, r)
		}
	}
	if shell.DefaultScheduleToStart != 5*time.Minute || store.DefaultRetention != 30*24*time.Hour {
		t.Errorf("the tenant defaults are %s and %s: update limits.md and this test", shell.DefaultScheduleToStart, store.DefaultRetention)
	}
}

func readPage(t *testing.T, name string) string {
	t.Helper()
	return readRepoFile(t, "docs/"+name)
}

// pageRow is the table row whose first cell is exactly cell.
func pageRow(page, cell string) string {
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "| "+cell+" |") {
			return line
		}
	}
	return ""
}

// thousands writes n as the pages do: 1,000 and 16,384, but 256 and 32.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mib(n int) string { return strconv.Itoa(n>>20) + " MiB" }

func kib(n int) string { return strconv.Itoa(n>>10) + " KiB" }

func seconds(d time.Duration) string { return strconv.Itoa(int(d.Seconds())) + " s" }
