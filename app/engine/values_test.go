package engine

import (
	"strings"
	"testing"
	"time"
)

// outcome runs a manifest with a small output cap and returns the sim.
func outcome(t *testing.T, manifest string, input any, ticks ...[]Input) *sim {
	t.Helper()
	m, err := parseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, m, input)
	s.eng.MaxOutputBytes = 200
	s.tick(t0, 1)
	for i, ins := range ticks {
		s.tick(t0.Add(time.Duration(i+1)*time.Second), uint64(i), ins...)
	}
	return s
}

func wantNodeError(t *testing.T, s *sim, node, code, contains string) {
	t.Helper()
	n := s.nodes[node]
	if n == nil || n.State != NodeFailed || n.Error == nil || n.Error.Code != code || !strings.Contains(n.Error.Message, contains) {
		t.Fatalf("node %s = %+v (error %+v), want failed %s containing %q", node, stateOf(n), errOf(n), code, contains)
	}
	for k, a := range s.attempts {
		if k[0] == node && a.Output != nil {
			t.Errorf("attempt %v of %s kept output %v", k, node, a.Output)
		}
	}
}

func errOf(n *Node) *Error {
	if n == nil {
		return nil
	}
	return n.Error
}

func TestEveryOutputObeysTheCap(t *testing.T) {
	t.Parallel()
	big := "`'" + strings.Repeat("x", 300) + "'`"
	t.Run("transform", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step a transform expr="+big, nil)
		wantNodeError(t, s, "a", CodePayloadTooLarge, "over the 200-byte limit")
	})
	t.Run("scatter", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step s scatter items_expr=`[1, 2, 3]` do={\"type\":\"transform\",\"with\":{\"expr\":\"'"+strings.Repeat("y", 90)+"'\"}}\nstep g gather scatter_ref=s\nedge s g", nil)
		wantNodeError(t, s, "s", CodePayloadTooLarge, "output is")
	})
	t.Run("checkpoint", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step c checkpoint name=x output_expr="+big, nil)
		wantNodeError(t, s, "c", CodePayloadTooLarge, "over the 200-byte limit")
		for _, c := range s.decided[0].Commands {
			if _, ok := c.(NotifyParent); ok {
				t.Fatal("an oversized checkpoint notified its parent")
			}
		}
	})
	t.Run("worker result", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step a task handler=h", nil, []Input{ok("a", 1, strings.Repeat("z", 300))})
		wantNodeError(t, s, "a", CodePayloadTooLarge, "over the 200-byte limit")
		if s.nodes["a"].Attempt != 1 {
			t.Fatalf("payload_too_large was retried: attempt %d", s.nodes["a"].Attempt)
		}
	})
	t.Run("signal payload", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step g signal name=go", nil, []Input{SignalReceived{Signal: Signal{RequestID: "r", Name: "go", Payload: strings.Repeat("z", 300)}}})
		wantNodeError(t, s, "g", CodePayloadTooLarge, "over the 200-byte limit")
	})
	t.Run("event_set output", func(t *testing.T) {
		t.Parallel()
		data := map[string]any{"d": strings.Repeat("q", 120)}
		s := outcome(t, "step es event_set events=`[{\"name\":\"a\"},{\"name\":\"b\"}]`", nil,
			[]Input{EventMatched{EventID: "1", Name: "a", Data: data}, EventMatched{EventID: "2", Name: "b", Data: data}})
		wantNodeError(t, s, "es", CodePayloadTooLarge, "over the 200-byte limit")
	})
	t.Run("digest stops growing at the cap", func(t *testing.T) {
		t.Parallel()
		data := map[string]any{"d": strings.Repeat("q", 80)}
		var evs []Input
		for _, id := range []string{"1", "2", "3", "4"} {
			evs = append(evs, EventMatched{EventID: id, Name: "n", Data: data})
		}
		s := outcome(t, "step dg digest name=n window_ms=60000", nil, evs)
		wantNodeError(t, s, "dg", CodePayloadTooLarge, "over the 200-byte limit")
	})
	t.Run("run output", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step a transform expr=`1`\noutput_expr "+big, nil)
		if s.run.Status != RunFailed || s.run.Error == nil || s.run.Error.Code != CodePayloadTooLarge {
			t.Fatalf("run = %s %+v, want failed payload_too_large", s.run.Status, s.run.Error)
		}
	})
}

func TestUnstorableValuesFailAsInvalidOutput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, manifest, node, contains string }{
		{"NUL in a transform", "step a transform expr=`{'name': 'a\\u0000b'}`", "a", "NUL character (\\u0000) at .name"},
		{"infinity", "step a transform expr=`{'x': [1.0 / 0.0]}`", "a", "NaN or an infinity"},
		{"NUL in a task's input", "step a task handler=h input_expr=`'\\u0000'`", "a", "with.input_expr: value contains a NUL"},
		{"NUL in scatter items", "step s scatter items_expr=`['ok', 'a\\u0000']` do={\"type\":\"transform\",\"with\":{\"expr\":\"item\"}}", "s", "[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := outcome(t, c.manifest, nil)
			wantNodeError(t, s, c.node, CodeInvalidOutput, c.contains)
			for _, d := range s.decided {
				for _, cmd := range d.Commands {
					if _, ok := cmd.(DispatchAttempt); ok {
						t.Fatal("an unstorable input was dispatched")
					}
				}
			}
		})
	}
	t.Run("from a worker, not retried", func(t *testing.T) {
		t.Parallel()
		s := outcome(t, "step a task handler=h", nil, []Input{ok("a", 1, map[string]any{"k": "\x00"})})
		wantNodeError(t, s, "a", CodeInvalidOutput, "at .k")
		if s.nodes["a"].Attempt != 1 {
			t.Fatalf("invalid_output was retried: attempt %d", s.nodes["a"].Attempt)
		}
	})
}

func TestChildStartFailureKeepsTheChildsCode(t *testing.T) {
	t.Parallel()
	s := outcome(t, "step c subworkflow workflow=nope", nil, []Input{ChildRunUpdate{
		Node: "c", Status: RunFailed, NotStarted: true, Error: &Error{Code: "workflow_not_found", Message: `no published definition "nope"`},
	}})
	wantNodeError(t, s, "c", "workflow_not_found", `no published definition "nope"`)
	s = outcome(t, "step c subworkflow workflow=w", nil, []Input{ChildRunUpdate{
		Node: "c", Status: RunFailed, Error: &Error{Code: "task_failed", Message: "boom"},
	}})
	wantNodeError(t, s, "c", CodeChildFailed, "child run ended failed: task_failed: boom")
}
