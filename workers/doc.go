// Package workers is Ductor's River adapters: the job workers (TickWorker
// hands a tick job to shell.Ticker, StepWorker runs a step attempt with an
// Executor and hands its result to shell.Steps), the River client that
// works a process's queues (NewClient), the loops a process runs beside
// it (Runtime.Sweep, HeartbeatSteps, DeleteExpiredLogins), and New, which
// builds a process's layers, the shell and the runs service, from one
// Config. The layering is written down in package shell's doc.
package workers
