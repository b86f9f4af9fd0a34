package expr

import (
	"time"

	"github.com/google/cel-go/interpreter"
)

// Vars are the values an evaluation sees. Fields that do not apply (Item,
// Index, Key outside scatter children, Event outside match expressions)
// keep their zero values.
type Vars struct {
	Input any
	Steps map[string]any
	Run   map[string]any
	Now   time.Time
	Item  any
	Index int
	Key   string
	Event any
	// Progress and Loop are the scoped variables (see scoped.go); nil
	// gives their zero values.
	Progress *Progress
	Loop     *Loop
}

// activation resolves variable names straight from Vars, without building
// a map per evaluation.
type activation struct {
	vars  *Vars
	meter *meter
}

func (a *activation) ResolveName(name string) (any, bool) {
	v := a.vars
	switch name {
	case VarInput:
		return v.Input, true
	case VarSteps:
		return v.Steps, true
	case VarRun:
		return v.Run, true
	case VarNow:
		return v.Now, true
	case VarItem:
		return v.Item, true
	case VarIndex:
		return v.Index, true
	case VarKey:
		return v.Key, true
	case VarEvent:
		return v.Event, true
	case meterVar:
		return a.meter, true
	}
	return v.scoped(name)
}

func (a *activation) Parent() interpreter.Activation { return nil }
