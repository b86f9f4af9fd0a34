package pgcluster

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// postmasterState is what the data directory's postmaster.pid says.
type postmasterState int

const (
	stateAbsent postmasterState = iota // no postmaster.pid
	stateStale                         // postmaster.pid left by a server that is gone
	stateBusy                          // a server is starting or stopping
	stateReady                         // a server is accepting connections
)

type postmaster struct {
	state postmasterState
	pid   int
	port  int
}

func (c *Cluster) pidFile() string { return filepath.Join(c.dataDir(), "postmaster.pid") }

// postmaster reads postmaster.pid, whose lines are: pid, data directory,
// start time, port, socket directory, listen address, shared memory key
// and status.
func (c *Cluster) postmaster() postmaster {
	data, err := os.ReadFile(c.pidFile())
	if errors.Is(err, os.ErrNotExist) {
		return postmaster{state: stateAbsent}
	}
	lines := strings.Split(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		return postmaster{state: stateStale}
	}
	pm := postmaster{state: stateBusy, pid: pid}
	if pid < 0 { // a single-user backend
		pm.pid = -pid
	}
	if !processRunning(pm.pid) || !isPostgres(pm.pid) {
		pm.state = stateStale
		return pm
	}
	if len(lines) > 7 && pid > 0 && strings.TrimSpace(lines[7]) == "ready" {
		pm.port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
		pm.state = stateReady
	}
	return pm
}

// processRunning reports whether process pid exists and is not a zombie.
func processRunning(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesized command name: "pid (comm) S ...".
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// isPostgres reports whether process pid is a postgres server, so that a
// postmaster.pid naming a pid since reused by another program counts as
// stale. Without /proc it assumes so.
func isPostgres(pid int) bool {
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return true
	}
	return strings.TrimSpace(string(comm)) == "postgres"
}
