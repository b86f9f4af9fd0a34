// Package pgcluster runs a local PostgreSQL cluster from Go, using the
// machine's own server programs: initdb, pg_ctl and postgres, found on
// PATH or else in the newest /usr/lib/postgresql/*/bin.
//
// `ductor dev` uses it when DATABASE_URL is unset, to keep a cluster in
// ./.ductor/pg that survives restarts; `make test` uses it through the
// pgrun command for a throwaway cluster per test run.
//
// # Layout
//
// A cluster lives in one directory (Options.Dir):
//
//	data/          the data directory (PGDATA), made by initdb
//	postgres.log   the server log; start errors quote its end
//	port           the port last used, reused by the next Start
//
// data/ductor.conf, included at the end of postgresql.conf, is rewritten
// on every Start: the server listens on 127.0.0.1 only, Unix sockets are
// off (a socket path under a deep directory can exceed the 107-byte
// limit), max_connections is 300 so parallel test packages fit, and
// Options.Fast turns durability off for throwaway clusters.
//
// # Life cycle
//
// Start runs initdb if Dir holds no cluster (into data.init, renamed when
// complete, so an interrupted initdb leaves nothing half made). Then it
// reads data/postmaster.pid: a live server is reused as is, a stale file
// is removed, and otherwise the server is started with pg_ctl -w. Last, it
// creates Options.Database if missing. Stop runs pg_ctl stop -m fast and
// waits for the postmaster to exit; Destroy also removes Dir.
//
// Stop stops the server whoever started it, so a cluster left running by
// a killed process is stopped by the next user's Stop.
//
// # A skewed clock
//
// Options.ClockOffset runs the server under libfaketime (Debian's
// faketime package), its wall clock that far ahead of the machine's or
// behind it, so tests can show that nothing Ductor decides by time reads
// another clock than the database's.
//
// # Root
//
// PostgreSQL refuses to run as root. When this process is root (as in CI
// containers), initdb and pg_ctl run as the "postgres" system user, which
// must exist; Dir is given to that user, and Start fails with a clear
// error if an ancestor of Dir is not traversable by it.
//
// # Authentication
//
// initdb creates the superuser role Superuser with trust authentication:
// any local process can connect as any role, over loopback only. This is
// for development and tests, never for data that matters.
package pgcluster
