package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/queries"
)

// Input kinds as stored in run_input.kind.
const (
	InputResult         = "result"
	InputTimer          = "timer"
	InputCancel         = "cancel"
	InputRetry          = "retry"
	InputContinueAsNew  = "continue_as_new"
	InputTerminate      = "terminate"
	InputSignal         = "signal"
	InputEvent          = "event"
	InputChild          = "child"
	InputApproval       = "approval"
	InputCaseStatus     = "case"
	InputCancelNode     = "cancel_node"
	InputAdmit          = "admit"
	InputReconsider     = "reconsider"
	maxInputsPerTick    = 500
	inputKindsSupported = "result, timer, cancel, retry, continue_as_new, terminate, signal, event, child, approval, case, cancel_node, admit, reconsider"
)

// PendingInputs are a run's undrained inputs, oldest first.
type PendingInputs struct {
	IDs    []int64
	Inputs []engine.Input
	// More reports inputs beyond this batch.
	More bool
}

// RunInputAdd stores an input for the run's next tick. The dedup key makes
// a repeated delivery insert nothing; added reports whether it was new.
func (s *Store) RunInputAdd(ctx context.Context, tenantID, runID uuid.UUID, in engine.Input) (added bool, err error) {
	kind, dedup := inputKey(in)
	payload, err := jsonvalue.Marshal(in)
	if err != nil {
		return false, fmt.Errorf("encode %s input: %w", kind, err)
	}
	n, err := s.q.RunInputInsert(ctx, queries.RunInputInsertParams{
		TenantID: tenantID, RunID: runID, Kind: kind, DedupKey: dedup, Payload: payload,
	})
	if err != nil {
		return false, fmt.Errorf("store %s input: %w", kind, err)
	}
	return n == 1, nil
}

// RunInputAddMany stores inputs for the run's next tick, in order, with
// one statement; duplicates insert nothing.
func (s *Store) RunInputAddMany(ctx context.Context, tenantID, runID uuid.UUID, ins []engine.Input) error {
	p := queries.RunInputInsertManyParams{TenantID: tenantID, RunID: runID}
	for _, in := range ins {
		kind, dedup := inputKey(in)
		payload, err := jsonvalue.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s input: %w", kind, err)
		}
		p.Kinds = append(p.Kinds, kind)
		p.DedupKeys = append(p.DedupKeys, dedup)
		p.Payloads = append(p.Payloads, string(payload))
	}
	if err := s.q.RunInputInsertMany(ctx, p); err != nil {
		return fmt.Errorf("store inputs: %w", err)
	}
	return nil
}

// inputKey is an input's kind and its dedup key: results are unique per
// (node, generation, attempt), controls and signals per request id.
func inputKey(in engine.Input) (kind, dedup string) {
	switch v := in.(type) {
	case engine.StepResult:
		return InputResult, fmt.Sprintf("result:%s:%d:%d", v.Node, v.Generation, v.Attempt)
	case engine.TimerFired:
		return InputTimer, "timer:" + v.TimerID
	case engine.Cancel:
		return InputCancel, "cancel:" + v.RequestID
	case engine.RetryNode:
		return InputRetry, "retry:" + v.RequestID
	case engine.ContinueAsNew:
		return InputContinueAsNew, "can:" + v.RequestID
	case engine.Terminate:
		return InputTerminate, "terminate:" + string(v.Reason)
	case engine.SignalReceived:
		return InputSignal, "signal:" + v.Signal.RequestID
	case engine.EventMatched:
		return InputEvent, "event:" + v.EventID
	case engine.ChildRunUpdate:
		return InputChild, childDedup(v)
	case engine.ApprovalDecided:
		return InputApproval, fmt.Sprintf("approval:%s:%s:%s", v.Node, v.Approval, v.By)
	case engine.CaseStatusChanged:
		return InputCaseStatus, fmt.Sprintf("case:%s:%s", v.Node, v.Status)
	case engine.CancelNode:
		return InputCancelNode, "cancel_node:" + v.RequestID
	case engine.Admit:
		return InputAdmit, "admit" // a run is let go once
	case engine.Reconsider:
		return InputReconsider, "reconsider:" + v.RequestID
	}
	panic(fmt.Sprintf("store: unknown input %T", in))
}

// childDedup keys a child's report by node, status and checkpoint, and
// by the child run when it is named: each iteration of a loop reports
// from a run of its own.
func childDedup(v engine.ChildRunUpdate) string {
	key := fmt.Sprintf("child:%s:%s:%s", v.Node, v.Status, v.Checkpoint)
	if v.ChildRunID != "" {
		key += ":" + v.ChildRunID
	}
	return key
}

func decodeInput(kind string, payload []byte) (engine.Input, error) {
	var target engine.Input
	var err error
	switch kind {
	case InputResult:
		target, err = decodeAs[engine.StepResult](payload)
	case InputTimer:
		target, err = decodeAs[engine.TimerFired](payload)
	case InputCancel:
		target, err = decodeAs[engine.Cancel](payload)
	case InputRetry:
		target, err = decodeAs[engine.RetryNode](payload)
	case InputContinueAsNew:
		target, err = decodeAs[engine.ContinueAsNew](payload)
	case InputTerminate:
		target, err = decodeAs[engine.Terminate](payload)
	case InputSignal:
		target, err = decodeAs[engine.SignalReceived](payload)
	case InputEvent:
		target, err = decodeAs[engine.EventMatched](payload)
	case InputChild:
		target, err = decodeAs[engine.ChildRunUpdate](payload)
	case InputApproval:
		target, err = decodeAs[engine.ApprovalDecided](payload)
	case InputCaseStatus:
		target, err = decodeAs[engine.CaseStatusChanged](payload)
	case InputCancelNode:
		target, err = decodeAs[engine.CancelNode](payload)
	case InputAdmit:
		target, err = decodeAs[engine.Admit](payload)
	case InputReconsider:
		target, err = decodeAs[engine.Reconsider](payload)
	default:
		return nil, fmt.Errorf("unknown input kind %q (known: %s)", kind, inputKindsSupported)
	}
	return target, err
}

func decodeAs[T engine.Input](payload []byte) (engine.Input, error) {
	var v T
	if err := jsonvalue.Unmarshal(payload, &v); err != nil {
		return nil, fmt.Errorf("decode %T: %w", v, err)
	}
	return v, nil
}

// NormalizeInput gives an input exactly the shape it would have after a
// trip through run_input (JSON numbers as float64, plain maps and slices),
// for an inline tick that hands it to the engine directly.
func NormalizeInput(in engine.Input) (engine.Input, error) {
	kind, _ := inputKey(in)
	payload, err := jsonvalue.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("encode %s input: %w", kind, err)
	}
	return decodeInput(kind, payload)
}
