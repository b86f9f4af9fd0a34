package workers_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/ductor/ductor/app/wftest"
)

// propCase is one random definition, the mocked results of its tasks and
// what the outside world sends it: enough to run it both in memory and on
// a server and expect the same end.
type propCase struct {
	key     string
	doc     map[string]any
	mocks   map[string]wftest.MockList
	signals []string
	// url is the local server http steps call; it answers 200 {"ok": true}.
	url       string
	approvals map[string]bool
	cases     map[string]bool
}

// gen builds a random layered graph of 3 to 9 steps over the fifteen
// step types (a gather follows each scatter),
// with retries, waits, joins and scatters. It avoids what real time would
// decide differently from virtual time: every task continues on error and
// every wait with a timeout skips on it, so no failure races a parallel
// branch; events are never sent (their waits time out); signals are sent
// at the start; approvals and cases are decided once they open.
func gen(seed uint64, url string) *propCase {
	rng := rand.New(rand.NewPCG(seed, 33))
	pc := &propCase{key: fmt.Sprintf("prop-%d", seed), url: url, mocks: map[string]wftest.MockList{}, approvals: map[string]bool{}, cases: map[string]bool{}}
	n := 3 + rng.IntN(7)
	var steps, edges []any
	kinds := map[string]string{}
	for i := range n {
		ref := fmt.Sprintf("s%d", i)
		st, kind := pc.step(rng, ref, i)
		kinds[ref] = kind
		if i > 0 {
			preds := pickPreds(rng, i)
			if len(preds) > 1 && rng.IntN(2) == 0 {
				st["join"] = "any"
			}
			for _, p := range preds {
				edges = append(edges, map[string]any{"from": p, "to": ref, "on": outcome(rng, kinds[p])})
			}
		}
		steps = append(steps, st)
		if kind == "scatter" {
			g := fmt.Sprintf("s%dg", i)
			steps = append(steps, map[string]any{"ref": g, "type": "gather", "with": map[string]any{"scatter_ref": ref, "strategy": "partition"}})
			edges = append(edges, map[string]any{"from": ref, "to": g})
			kinds[g] = "gather"
		}
	}
	pc.doc = map[string]any{"key": pc.key, "steps": steps, "edges": orNone(edges)}
	return pc
}

func orNone(edges []any) []any {
	if edges == nil {
		return []any{}
	}
	return edges
}

// pickPreds chooses one or two earlier steps.
func pickPreds(rng *rand.Rand, i int) []string {
	a := rng.IntN(i)
	preds := []string{fmt.Sprintf("s%d", a)}
	if b := rng.IntN(i); b != a && rng.IntN(3) == 0 {
		preds = append(preds, fmt.Sprintf("s%d", b))
	}
	return preds
}

// outcome is an edge outcome the predecessor's kind can take.
func outcome(rng *rand.Rand, kind string) string {
	switch kind {
	case "task":
		return []string{"success", "error", "done"}[rng.IntN(3)]
	case "condition":
		return []string{"true", "false"}[rng.IntN(2)]
	case "approval":
		return []string{"approved", "rejected", "done"}[rng.IntN(3)]
	}
	return []string{"success", "done"}[rng.IntN(2)]
}

var propKinds = []string{"task", "task", "http", "transform", "condition", "checkpoint", "wait", "signal", "event", "event_set", "digest", "approval", "human_loop", "scatter", "subworkflow"}

func (pc *propCase) step(rng *rand.Rand, ref string, i int) (map[string]any, string) {
	kind := propKinds[rng.IntN(len(propKinds))]
	st := map[string]any{"ref": ref, "type": kind}
	switch kind {
	case "task":
		st["with"] = map[string]any{"handler": "prop.mock", "input_expr": fmt.Sprintf(`{"key": %q}`, pc.key)}
		st["retry"] = map[string]any{"max_attempts": 1 + rng.IntN(3), "initial_interval": "10ms"}
		st["on_error"] = "continue"
		pc.mocks[ref] = randomMocks(rng)
	case "http":
		st["with"] = map[string]any{"url": pc.url, "method": "POST", "body": map[string]any{"step": ref}}
		st["retry"] = map[string]any{"max_attempts": 2, "initial_interval": "10ms"}
		pc.mocks[ref] = wftest.MockList{{Output: map[string]any{"status": int64(200), "body": map[string]any{"ok": true}}}}
	case "transform":
		st["with"] = map[string]any{"expr": fmt.Sprintf(`{"v": input.n + %d}`, i)}
	case "condition":
		st["with"] = map[string]any{"expr": fmt.Sprintf(`input.n > %d`, rng.IntN(10))}
	case "checkpoint":
		st["with"] = map[string]any{"name": "cp" + ref}
	case "wait":
		st["with"] = map[string]any{"duration": fmt.Sprintf("%dms", 10+rng.IntN(30))}
	case "signal":
		st["with"] = map[string]any{"name": "sig" + ref}
		pc.signals = append(pc.signals, "sig"+ref)
	case "event":
		st["with"] = map[string]any{"name": "ev" + ref, "timeout": "20ms", "on_timeout": "skip"}
	case "event_set":
		st["with"] = map[string]any{"events": []any{map[string]any{"name": "a" + ref, "key": "a"}, map[string]any{"name": "b" + ref, "key": "b"}}, "timeout": "20ms", "on_timeout": "succeed_partial"}
	case "digest":
		st["with"] = map[string]any{"name": "dg" + ref, "window": "20ms", "max_items": 5}
	case "approval":
		st["with"] = map[string]any{"approvers": []any{"ann@example.com"}, "title": "ok?"}
		pc.approvals[ref] = rng.IntN(2) == 0
	case "human_loop":
		st["with"] = map[string]any{"title": "case", "assignees": []any{"ann@example.com"}, "awaiting_status": "resolved"}
		pc.cases[ref] = true
	case "scatter":
		size := 1 + rng.IntN(4)
		st["with"] = map[string]any{"items_expr": fmt.Sprintf("[%s]", listOf(size)), "concurrency": 1 + rng.IntN(3),
			"do": map[string]any{"type": "task", "with": map[string]any{"handler": "prop.mock", "input_expr": fmt.Sprintf(`{"key": %q}`, pc.key)},
				"retry": map[string]any{"max_attempts": 2, "initial_interval": "10ms"}}}
		for k := range size {
			pc.mocks[fmt.Sprintf("%s[%d]", ref, k)] = randomMocks(rng)
		}
	case "subworkflow":
		st["with"] = map[string]any{"workflow": "prop-child"}
		pc.mocks[ref] = wftest.MockList{{Output: map[string]any{"c": map[string]any{"child": int64(1)}}}}
	}
	return st, kind
}

func listOf(n int) string {
	s := ""
	for i := range n {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(i)
	}
	return s
}

// randomMocks answers up to three attempts: successes, retryable and
// final failures.
func randomMocks(rng *rand.Rand) wftest.MockList {
	var l wftest.MockList
	for a := range 3 {
		switch rng.IntN(4) {
		case 0:
			l = append(l, wftest.Mock{Error: &wftest.MockError{Code: "flaky", Message: "try again", Retryable: true}})
		case 1:
			l = append(l, wftest.Mock{Error: &wftest.MockError{Code: "broken", Message: "no"}})
		default:
			l = append(l, wftest.Mock{Output: map[string]any{"v": int64(a*100 + rng.IntN(100))}})
		}
	}
	return l
}
