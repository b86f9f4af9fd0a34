package shell

import (
	"testing"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

func stepJob(tenant uuid.UUID, node, queue string, edit func(*StepArgs)) river.InsertManyParams {
	a := StepArgs{TenantID: tenant, RunID: uuid.New(), Node: node, Type: "task"}
	if edit != nil {
		edit(&a)
	}
	return river.InsertManyParams{Args: a, InsertOpts: stepOpts(queue)}
}

// packSteps puts alike steps of one tenant and queue in one job, up to
// the bound, and leaves alone every step the sweep or River must see on
// its own.
func TestPackStepsKeepsEveryRule(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	std, bulk := QueueStepsStandard, QueueStepsBulk
	jobs := []river.InsertManyParams{
		stepJob(a, "a1", std, nil),
		stepJob(b, "b1", std, nil),
		stepJob(a, "a2", std, nil),
		stepJob(a, "sparse", std, func(s *StepArgs) { s.Sparse = true }),
		stepJob(a, "pool", std, func(s *StepArgs) { s.FlowKey, s.FlowLimit = "k", 1 }),
		stepJob(a, "held", std, func(s *StepArgs) { s.PoolWait = true }),
		stepJob(a, "bulk", bulk, nil),
		stepJob(a, "http", std, func(s *StepArgs) { s.Type = "http" }),
		stepJob(a, "late", std, func(s *StepArgs) { s.ScheduleToStartMS = 1 }),
		stepJob(a, "a3", std, nil),
		stepJob(a, "a4", std, nil),
		stepJob(b, "b2", std, nil),
	}
	got := map[string][]string{}
	var order []string
	for _, j := range packSteps(jobs, 3) {
		var nodes []string
		for _, m := range j.Args.(StepArgs).Members() {
			nodes = append(nodes, m.Node)
		}
		got[nodes[0]] = nodes
		order = append(order, nodes[0])
	}
	want := map[string][]string{
		"a1": {"a1", "a2", "a3"}, "b1": {"b1", "b2"}, "sparse": {"sparse"}, "pool": {"pool"}, "held": {"held"},
		"bulk": {"bulk"}, "http": {"http"}, "late": {"late"}, "a4": {"a4"},
	}
	if len(got) != len(want) {
		t.Fatalf("jobs %v, want %v", got, want)
	}
	for head, nodes := range want {
		if g := got[head]; len(g) != len(nodes) || (len(g) > 0 && g[len(g)-1] != nodes[len(nodes)-1]) {
			t.Errorf("job of %s carries %v, want %v", head, g, nodes)
		}
	}
	if order[0] != "a1" || order[1] != "b1" {
		t.Errorf("jobs in order %v: a batch takes its first step's place", order)
	}
	if n := len(packSteps(jobs, 1)); n != len(jobs) {
		t.Errorf("a bound of 1 packed %d steps into %d jobs", len(jobs), n)
	}
}
