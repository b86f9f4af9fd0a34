package wftest

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/expr"
	"github.com/ductor/ductor/app/jsonvalue"
)

// perform does what the shell does with a decision's commands: it puts
// what they will cause on the agenda.
func (s *sim) perform(ctx context.Context, cmds []engine.Command) error {
	for _, c := range cmds {
		if err := s.command(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (s *sim) command(ctx context.Context, c engine.Command) error {
	switch x := c.(type) {
	case engine.DispatchAttempt:
		return s.dispatch(ctx, x)
	case engine.CancelAttempt:
		s.agenda.remove(attemptKey(x.Node, x.Generation, x.Attempt))
	case engine.ScheduleTimer:
		s.agenda.add(maxTime(s.now, x.FireAt), "timer:"+x.TimerID, engine.TimerFired{TimerID: x.TimerID, Node: x.Node}, nil)
	case engine.CancelTimer:
		s.agenda.remove("timer:" + x.TimerID)
	case engine.OpenApproval:
		s.opened(x.Node, x.Key)
	case engine.OpenCase:
		s.opened(x.Node, x.Key)
	case engine.CloseInteraction:
		delete(s.open, x.Node)
	case engine.StartChildRun:
		return s.startChild(ctx, x)
	case engine.CancelChildRun:
		s.agenda.remove("child:" + x.Node)
	}
	return nil
}

func attemptKey(node string, gen, attempt int) string {
	return fmt.Sprintf("attempt:%s/%d/%d", node, gen, attempt)
}

// dispatch answers an attempt with its mock, due when the attempt would
// end.
func (s *sim) dispatch(ctx context.Context, da engine.DispatchAttempt) error {
	m, ok := s.mock(da.Node, da.Ref, da.Attempt)
	if r, isBuiltin := builtin(da); !ok && isBuiltin {
		s.agenda.add(maxTime(s.now, da.RunAt), attemptKey(da.Node, da.Generation, da.Attempt), *r, nil)
		return nil
	}
	if !ok {
		return fmt.Errorf("%w for step %s (attempt %d): add mocks.%s", ErrNoMock, da.Node, da.Attempt, da.Ref)
	}
	took, err := m.duration(da.TimeoutMS)
	if err != nil {
		return fmt.Errorf("mocks.%s: %w", da.Ref, err)
	}
	r := engine.StepResult{Node: da.Node, Generation: da.Generation, Attempt: da.Attempt}
	switch {
	case m.Timeout:
		r.Error = &engine.Error{Code: engine.CodeTimeout, Message: "attempt timed out", Retryable: true}
	case m.Error != nil:
		r.Error = &engine.Error{Code: m.Error.Code, Message: m.Error.Message, Retryable: m.Error.Retryable}
	default:
		if r.Output, err = s.output(ctx, m, da.Params, da.Node); err != nil {
			return fmt.Errorf("mocks.%s: %w", da.Ref, err)
		}
	}
	s.agenda.add(maxTime(s.now, da.RunAt).Add(took), attemptKey(da.Node, da.Generation, da.Attempt), r, nil)
	return nil
}

// mock finds the answer for a node's attempt: by node id (a scatter
// child's REF[KEY]), by REF[INDEX] for a child, then by ref.
func (s *sim) mock(node, ref string, attempt int) (Mock, bool) {
	names := []string{node}
	if n := s.store.Nodes[node]; n != nil && n.Child != nil {
		names = append(names, ref+"["+strconv.Itoa(n.Child.Index)+"]")
	}
	for _, name := range append(names, ref) {
		if l := s.c.Mocks[name]; len(l) > 0 {
			return l[min(max(attempt, 1), len(l))-1], true
		}
	}
	return Mock{}, false
}

func (m Mock) duration(timeoutMS int64) (time.Duration, error) {
	if m.After != "" {
		return time.ParseDuration(m.After)
	}
	if m.Timeout {
		return time.Duration(timeoutMS) * time.Millisecond, nil
	}
	return 0, nil
}

// output is the mock's output, or its output_expr evaluated over the
// dispatched parameters (a child run's input) and the scatter child's
// item.
func (s *sim) output(ctx context.Context, m Mock, input any, node string) (any, error) {
	if m.OutputExpr == "" {
		return m.Output, nil
	}
	prg, err := s.r.cache.Get(m.OutputExpr, expr.KindAny)
	if err != nil {
		return nil, err
	}
	v := expr.Vars{Input: input, Run: s.store.Run.Meta, Now: s.now}
	if n := s.store.Nodes[node]; n != nil && n.Child != nil {
		v.Item, v.Index, v.Key = n.Child.Item, n.Child.Index, n.Child.Key
	}
	out, err := prg.Eval(ctx, v)
	if err != nil {
		return nil, err
	}
	return jsonvalue.Normalize(out)
}

// startChild answers a sync child run with the node's mock (one entry
// per child started, so per loop iteration); an async child needs none.
func (s *sim) startChild(ctx context.Context, sc engine.StartChildRun) error {
	if !sc.Sync {
		return nil
	}
	s.children[sc.Node]++
	n := s.store.Nodes[sc.Node]
	m, ok := s.mock(sc.Node, n.Ref, s.children[sc.Node])
	if !ok {
		return fmt.Errorf("%w for subworkflow %s: add mocks.%s", ErrNoMock, sc.Node, n.Ref)
	}
	took, err := m.duration(0)
	if err != nil {
		return fmt.Errorf("mocks.%s: %w", n.Ref, err)
	}
	u := engine.ChildRunUpdate{Node: sc.Node, Status: engine.RunSucceeded, ChildRunID: engine.ChildRunID(sc.Key)}
	if u.Output, err = s.output(ctx, m, sc.Input, sc.Node); err != nil {
		return fmt.Errorf("mocks.%s: %w", n.Ref, err)
	}
	if m.Error != nil {
		u.Status, u.Output = engine.RunFailed, nil
		u.Error = &engine.Error{Code: m.Error.Code, Message: m.Error.Message, Retryable: m.Error.Retryable}
	}
	if m.Status != "" {
		u.Status = engine.RunStatus(m.Status)
	}
	s.agenda.add(s.now.Add(took), "child:"+sc.Node, u, nil)
	return nil
}
