package upgrade_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/transcript"
	"github.com/ductor/ductor/app/upgrade"
)

var update = flag.Bool("update", false, "rewrite testdata transcripts with the actual output")

// TestTranscripts replays testdata/*.txt: `from` and `to` compile a
// definition (YAML, the block's following lines), `run STATUS` sets the
// run's status, `node REF STATE [OUTCOME] [waiting=TYPE] [scatter=DONE/TOTAL] [in=EDGE,...] [output=JSON]`
// a node, `plan [cancel_removed] [retry=REF]` prints the plan, and
// `apply [cancel_removed]` applies it to the state, as app/runs writes
// it, and prints what the engine's next tick on the target version
// decides with the inputs the upgrade delivers.
func TestTranscripts(t *testing.T) {
	transcript.Replay(t, *update, func(t *testing.T) func([]string) string {
		r := &replay{st: &engine.State{Run: engine.Run{ID: "run1", Status: engine.RunWaiting}, Nodes: map[string]*engine.Node{}}}
		return r.do
	})
}

type replay struct {
	from, to *definition.Manifest
	st       *engine.State
}

func (r *replay) do(cmd []string) string {
	for len(cmd) > 1 && strings.HasPrefix(cmd[0], "#") {
		cmd = cmd[1:] // a comment
	}
	f := strings.Fields(cmd[0])
	switch f[0] {
	case "from", "to":
		c, err := definition.Compile([]byte(strings.Join(cmd[1:], "\n")), definition.FormatYAML)
		if err != nil {
			return "error: " + err.Error()
		}
		if f[0] == "from" {
			r.from = c.Manifest
		} else {
			r.to = c.Manifest
		}
		return "ok"
	case "run":
		r.st.Run.Status = engine.RunStatus(f[1])
		return "ok"
	case "nodes":
		r.st.Nodes = map[string]*engine.Node{}
		for _, line := range cmd[1:] {
			g := strings.Fields(line)
			n := &engine.Node{ID: g[0], Ref: g[0], State: engine.NodeState(g[1]), Attempt: 1}
			for _, o := range g[2:] {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "waiting":
					n.Waiting = &engine.Waiting{Type: engine.WaitingType(v)}
					if v == "timer" {
						n.Waiting.TimerID = g[0] + ":wake"
					}
				case "scatter":
					var done, total int
					fmt.Sscanf(v, "%d/%d", &done, &total)
					n.Scatter = &engine.ScatterState{Total: total, Succeeded: done}
				case "output":
					_ = json.Unmarshal([]byte(v), &n.Output)
				case "in":
					n.Inbound = map[string]engine.EdgeMark{}
					for _, id := range strings.Split(v, ",") {
						n.Inbound[id] = engine.EdgeFired
					}
				default:
					n.Outcome = definition.Outcome(k)
				}
			}
			r.st.Nodes[n.ID] = n
		}
		return "ok"
	case "plan", "apply":
		var o upgrade.Options
		for _, a := range f[1:] {
			k, v, _ := strings.Cut(a, "=")
			switch k {
			case "cancel_removed":
				o.CancelRemoved = true
			case "retry":
				o.Retry = v
			}
		}
		if f[0] == "apply" {
			return r.apply(upgrade.Plan(r.st, r.from, r.to, o))
		}
		return format(upgrade.Plan(r.st, r.from, r.to, o))
	}
	return "unknown command " + f[0]
}

// apply writes the plan into the state and runs the engine's next tick
// on the target version, with the Reconsider input the upgrade delivers.
func (r *replay) apply(p *upgrade.Result) string {
	if p.Refused() {
		return "refused: " + p.Refusals[0].Path
	}
	st := &engine.State{Run: r.st.Run, Nodes: map[string]*engine.Node{}}
	for id, n := range r.st.Nodes {
		st.Nodes[id] = n.Clone()
	}
	for _, n := range p.Write {
		st.Nodes[n.ID] = n.Clone()
	}
	for _, id := range p.Delete {
		delete(st.Nodes, id)
	}
	var ins []engine.Input
	if len(p.Reconsider) > 0 {
		ins = append(ins, engine.Reconsider{RequestID: "up", Nodes: p.Reconsider})
	}
	env, err := expr.NewEnv()
	if err != nil {
		return "error: " + err.Error()
	}
	eng := &engine.Engine{Eval: engine.NewCELEvaluator(expr.NewCache(env, 16))}
	d, err := eng.Decide(context.Background(), r.to, st, engine.Tick{Now: time.Unix(0, 0).UTC(), Inputs: ins})
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	for _, tr := range d.Transitions {
		who := "run"
		if tr.Node != "" {
			who = "node " + tr.Node
		}
		fmt.Fprintf(&b, "%s %s -> %s", who, tr.From, tr.To)
		if tr.Detail != "" {
			fmt.Fprintf(&b, " (%s)", tr.Detail)
		}
		b.WriteString("\n")
	}
	for _, x := range d.Discarded {
		fmt.Fprintf(&b, "discard %s at %s: %s\n", x.Input, x.Node, x.Reason)
	}
	for _, n := range d.Nodes {
		if n.State.Terminal() {
			fmt.Fprintf(&b, "%s %s output=%s\n", n.ID, n.State, js(n.Output))
		}
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return strings.TrimRight(b.String(), "\n")
}

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func format(p *upgrade.Result) string {
	var b strings.Builder
	for _, n := range p.Nodes {
		fmt.Fprintf(&b, "node %s %s", n.Ref, n.Outcome)
		if n.State != "" {
			fmt.Fprintf(&b, " (%s)", n.State)
		}
		if n.WouldRun != "" {
			fmt.Fprintf(&b, " would_run=%s", n.WouldRun)
		}
		if len(n.Changes) > 0 {
			fmt.Fprintf(&b, " changes=%s", strings.Join(n.Changes, ","))
		}
		if n.Effect != "" {
			fmt.Fprintf(&b, ": %s", n.Effect)
		}
		b.WriteString("\n")
	}
	for _, x := range p.MissingReads {
		fmt.Fprintf(&b, "missing %s: %s\n", x.Path, x.Message)
	}
	for _, x := range p.Refusals {
		fmt.Fprintf(&b, "refuse %s: %s\n", x.Path, x.Message)
	}
	for _, x := range p.Reruns {
		fmt.Fprintf(&b, "rerun %s %s", x.Ref, x.Type)
		if x.FiresAgain {
			fmt.Fprintf(&b, " fires again (last attempt %s)", x.LastAttempt)
		}
		b.WriteString("\n")
	}
	if len(p.Reconsider) > 0 {
		fmt.Fprintf(&b, "reconsider %s\n", strings.Join(p.Reconsider, " "))
	}
	for _, n := range p.Write {
		in, _ := json.Marshal(n.Inbound)
		fmt.Fprintf(&b, "write %s %s inbound=%s\n", n.ID, n.State, in)
	}
	for _, d := range p.Delete {
		fmt.Fprintf(&b, "delete %s\n", d)
	}
	for _, c := range p.Withdraw {
		fmt.Fprintf(&b, "withdraw %T %+v\n", c, c)
	}
	fmt.Fprintf(&b, "summary %s", p.Summary)
	if p.Refused() {
		b.WriteString(" (refused)")
	}
	return b.String()
}

// The package stays pure, like the engine: no database, web framework
// or queue among its imports.
func TestImportsStayPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/ductor/ductor/app/upgrade").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"github.com/jackc/pgx", "github.com/labstack/echo", "github.com/riverqueue/river", "github.com/ductor/ductor/app/store", "database/sql", "net/http"} {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("app/upgrade imports %s", dep)
			}
		}
	}
}
