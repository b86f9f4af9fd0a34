package shell

import "github.com/ductor/ductor/app/jsonvalue"

// maxKeptInput bounds the input an attempt keeps for the inspector: a
// larger one is not kept (the step still gets all of it).
const maxKeptInput = 256 << 10

// KeptInput is the attempt's evaluated settings as JSON, as its row keeps
// them when a worker takes it; nil when they are too large to keep.
func (a StepArgs) KeptInput() []byte {
	b, err := jsonvalue.Marshal(a.Params)
	if err != nil || len(b) > maxKeptInput {
		return nil
	}
	return b
}
