package store

// StepJobLookups are the hand-written lookups of Ductor's River jobs by
// their args, with sample arguments and the index each must use, for the
// test that they use it.
var StepJobLookups = map[string]struct {
	SQL   string
	Args  []any
	Index string
}{
	"StepJobsLive":     {stepJobsLive, []any{"t", "r", "n", 0, 1}, "river_job_ductor_step_idx"},
	"StepJobsInFlight": {stepJobsInFlight, []any{[]string{"q"}, "t"}, "river_job_ductor_step_idx"},
	"StepJobsDiscardLost": {stepJobsDiscardLost, []any{
		[]string{"t"}, []string{"r"}, []string{"n"}, []int32{0}, []int32{1}}, "river_job_ductor_step_idx"},
	"pruneRiverJobs":   {pruneRiverJobs, []any{[]string{"r"}, "t"}, "river_job_ductor_run_idx"},
	"stepFlowInFlight": {stepFlowInFlight, []any{"t", "k"}, "river_job_ductor_flow_idx"},
	"stepFlowJobs":     {stepFlowJobs, nil, "river_job_ductor_flow_idx"},
	"poolHolders":      {poolHolders, []any{"00000000-0000-4000-8000-000000000001", "k", 10}, "river_job_ductor_flow_idx"},
}

// RiverStatements are the statements of river_job.go against River's
// tables, by the name of their constant, for the contract test that pins
// what they assume of River.
var RiverStatements = map[string]string{
	"stepJobsLive":             stepJobsLive,
	"stepJobsInFlight":         stepJobsInFlight,
	"fairClockAdvanceMany":     fairClockAdvanceMany,
	"stepJobsRetag":            stepJobsRetag,
	"stepJobsStranded":         stepJobsStranded,
	"stepJobsDiscardLost":      stepJobsDiscardLost,
	"tickJobsRescue":           tickJobsRescue,
	"runsForgotten":            runsForgotten,
	"stepJobsCompleteFinished": stepJobsCompleteFinished,
	"stepFlowJobs":             stepFlowJobs,
	"stepFlowInFlight":         stepFlowInFlight,
	"pruneRiverJobs":           pruneRiverJobs,
	"poolHolders":              poolHolders,
	"tickBacklog":              tickBacklog,
	"stepJobsCancelUnserved":   stepJobsCancelUnserved,
	"queueDepthQuery":          queueDepthQuery,
	"jobsLeft":                 jobsLeft,
	"RunJobsDump":              RunJobsDump,
}
