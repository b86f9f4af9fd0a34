// Package runs is the service the API and the CLI call on runs: Service
// starts, signals and controls runs and decides approvals and cases; its
// parts create and fire schedules (Schedules), hand bridge tasks to
// remote workers and take their results (Tasks), publish events and
// start the runs event triggers start (Events), and work bulk operations
// a chunk at a time (Batches). It is built once, by New, on a
// shell.Shell: every write goes through the shell's unit of work, and
// starts and task results tick their runs inline through its tick loop.
package runs
