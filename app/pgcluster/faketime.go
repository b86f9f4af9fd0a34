package pgcluster

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// libfaketimeGlob finds libfaketime where Debian's faketime package puts
// it, whatever the architecture.
const libfaketimeGlob = "/usr/lib/*/faketime/libfaketime.so.1"

// fakeClock is the environment that runs a program under libfaketime
// with its clock offset from the machine's; none for a zero offset. pg_ctl
// passes it to the postmaster, and the postmaster to every backend, so
// now(), timestamps and timeouts all read the offset clock.
func fakeClock(offset time.Duration) ([]string, error) {
	if offset == 0 {
		return nil, nil
	}
	libs, _ := filepath.Glob(libfaketimeGlob)
	if len(libs) == 0 {
		return nil, errors.New("pgcluster: ClockOffset needs libfaketime, which is missing (install the Debian package faketime)")
	}
	return []string{
		"LD_PRELOAD=" + libs[0],
		fmt.Sprintf("FAKETIME=%+ds", int(offset/time.Second)),
		"FAKETIME_DONT_FAKE_MONOTONIC=1", // only the wall clock moves
	}, nil
}
