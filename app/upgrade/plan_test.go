package upgrade_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/transcript"
	"github.com/ductor/ductor/app/upgrade"
)

var update = flag.Bool("update", false, "rewrite testdata transcripts with the actual output")

// TestTranscripts replays testdata/*.txt: `from` and `to` compile a
// definition (YAML, the block's following lines), `run STATUS` sets the
// run's status, `node REF STATE [OUTCOME] [waiting=TYPE] [scatter=DONE/TOTAL]`
// a node, and `plan [cancel_removed] [retry=REF]` prints the plan.
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
	case "plan":
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
		return format(upgrade.Plan(r.st, r.from, r.to, o))
	}
	return "unknown command " + f[0]
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
