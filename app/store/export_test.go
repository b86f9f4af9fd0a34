package store

// StepJobLookups are the hand-written lookups of step jobs by their args,
// with sample arguments, for the test that they use their index.
var StepJobLookups = map[string]struct {
	SQL  string
	Args []any
}{
	"StepJobsLive":     {stepJobsLive, []any{"t", "r", "n", 0, 1}},
	"StepJobsInFlight": {stepJobsInFlight, []any{[]string{"q"}, "t"}},
	"StepJobsDiscardLost": {stepJobsDiscardLost, []any{
		[]string{"t"}, []string{"r"}, []string{"n"}, []int32{0}, []int32{1}}},
}
