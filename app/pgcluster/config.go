package pgcluster

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// confFile is included from postgresql.conf and rewritten on every start
// from Options, so the options of the latest Start apply.
const confFile = "ductor.conf"

// settings is the content of confFile. Unix sockets are off: a socket path
// inside a deep cluster directory can exceed the 107-byte limit, and every
// client connects over loopback TCP anyway.
func settings(port int, fast bool) []byte {
	var b strings.Builder
	b.WriteString("# Written by pgcluster on every start: edits are lost.\n")
	fmt.Fprintf(&b, "port = %d\n", port)
	b.WriteString("listen_addresses = '127.0.0.1'\n")
	b.WriteString("unix_socket_directories = ''\n")
	b.WriteString("max_connections = 300\n")
	if fast {
		b.WriteString("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
	}
	return []byte(b.String())
}

// appendInclude makes postgresql.conf read confFile last.
func appendInclude(postgresqlConf string) error {
	f, err := os.OpenFile(postgresqlConf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# Settings managed by pgcluster.\ninclude = '%s'\n", confFile)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// choosePort returns requested if set, else the port remembered in the
// cluster directory if it is free, else a free port.
func (c *Cluster) choosePort(requested int) (int, error) {
	if requested != 0 {
		return requested, nil
	}
	data, err := os.ReadFile(c.portFile())
	if err == nil {
		if port, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && portFree(port) {
			return port, nil
		}
	}
	return freePort()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// logTail returns the end of the server log, for errors.
func (c *Cluster) logTail() string {
	f, err := os.Open(c.LogFile())
	if err != nil {
		return fmt.Sprintf("(no server log at %s: %v)", c.LogFile(), err)
	}
	defer f.Close()
	const max = 4096
	if info, err := f.Stat(); err == nil && info.Size() > max {
		_, _ = f.Seek(-max, io.SeekEnd)
	}
	tail, _ := io.ReadAll(f)
	return fmt.Sprintf("end of server log %s:\n%s", c.LogFile(), strings.TrimSpace(string(tail)))
}
