// Package usage meters what each tenant uses and bounds it with quotas.
//
// # Metering
//
// The figures are counted by the database in the transactions that do
// the work: statement-level triggers (migration 0045) on run,
// run_attempt, run_input, run_signal, event and webhook append one
// usage_delta row per (tenant, UTC day, definition) that a statement
// touched. A transaction that rolls back, a tick retried after losing its
// record_version race or a worker killed mid-step, takes its deltas with
// it; nothing in Go counts, so no code path can forget to. Deltas are
// only ever inserted, so two transactions of one tenant never wait on a
// counter row.
//
// A delta's definition comes from the rows metered: run_attempt and
// run_history_batch carry their run's definition_key (migration 0055),
// written with them by the statements that insert them, so no trigger
// looks a run up. (A run lookup from a trigger runs on the plan PL/pgSQL
// made at its first call in the session, which could scan a tenant's
// every run for each run metered.) Rows from before 0055 fall back to
// the lookup. checker.Usage compares the steps per definition with the
// attempts' runs.
//
// Service.Fold moves deltas into two rollups in one statement: usage_day
// (tenant, day, definition) and usage_month (tenant, month). Every read
// sums a rollup with the deltas not folded yet in one statement (one
// snapshot), so a read sees each delta once whether or not it was folded.
// Reading a month of every tenant is one row per tenant.
//
// # Quotas
//
// Quotas are set per tier (usage_tier_quota) and overridden per tenant
// (usage_tenant_quota): monthly steps, monthly runs, concurrent waiting
// runs and stored bytes. Service.Admit is called before a run starts
// (the API's start, schedules and event triggers; child runs and
// ContinueAsNew successors of running runs are never refused): at the
// hard limit it refuses with apperr.QuotaExceeded (429, Retry-After the
// start of the next month for monthly quotas), past the soft limit it
// records a ductor.usage.warning once per tenant, month and quota.
// Running runs are never stopped: their remaining steps run and count.
package usage
