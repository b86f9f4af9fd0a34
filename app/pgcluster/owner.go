package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// serverUser is the system user that runs PostgreSQL when this process is
// root, because postgres refuses to run as root.
const serverUser = "postgres"

// owner is the identity that runs initdb, pg_ctl and the server and owns
// the cluster directory. A nil *owner means "the current user".
type owner struct {
	name string
	uid  int
	gids []int // primary group first
}

// lookupOwner returns the user to run PostgreSQL as: nil when this process
// is not root, the postgres system user when it is.
func lookupOwner() (*owner, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(serverUser)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root, so PostgreSQL must run as the %q system user, which is missing (create it, e.g. `useradd --system %s`): %w", serverUser, serverUser, err)
	}
	return newOwner(u)
}

func newOwner(u *user.User) (*owner, error) {
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: uid of %q: %w", u.Username, err)
	}
	ids := []string{u.Gid}
	if more, err := u.GroupIds(); err == nil {
		ids = append(ids, more...)
	}
	o := &owner{name: u.Username, uid: uid}
	for _, id := range ids {
		gid, err := strconv.Atoi(id)
		if err != nil {
			return nil, fmt.Errorf("pgcluster: gid of %q: %w", u.Username, err)
		}
		if !slices.Contains(o.gids, gid) {
			o.gids = append(o.gids, gid)
		}
	}
	return o, nil
}

// command builds cmd to run as the owner, in dir, with PG* variables
// removed from the environment so that only explicit settings apply.
func (o *owner) command(ctx context.Context, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = cleanEnv(os.Environ())
	// SIGTERM rather than SIGKILL lets initdb remove what it made.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	if o != nil {
		groups := make([]uint32, len(o.gids))
		for i, g := range o.gids {
			groups[i] = uint32(g)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{
			Uid: uint32(o.uid), Gid: groups[0], Groups: groups[1:],
		}}
	}
	return cmd
}

// run runs cmd, copying its output to log, and returns an error that
// includes the output when it fails.
func (o *owner) run(ctx context.Context, log io.Writer, dir, name string, args ...string) error {
	return o.runEnv(ctx, log, dir, nil, name, args...)
}

// runEnv is run with more environment variables.
func (o *owner) runEnv(ctx context.Context, log io.Writer, dir string, env []string, name string, args ...string) error {
	var out bytes.Buffer
	cmd := o.command(ctx, dir, name, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout = io.MultiWriter(&out, log)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("pgcluster: %s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func cleanEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "PG")
	})
}

// chown gives path to the owner; a no-op when not running as root.
func (o *owner) chown(path string) error {
	if o == nil {
		return nil
	}
	if err := os.Lchown(path, o.uid, o.gids[0]); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// checkTraversable returns an error naming the first ancestor of dir that
// the owner cannot enter, since PostgreSQL could not reach its data then.
func (o *owner) checkTraversable(dir string) error {
	if o == nil {
		return nil
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("pgcluster: %w", err)
		}
		if !o.canSearch(info) {
			return fmt.Errorf("pgcluster: directory %s (mode %s) is not traversable by the %q user that runs PostgreSQL: choose a cluster directory elsewhere or run `chmod o+x %s`", p, info.Mode(), o.name, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func (o *owner) canSearch(info fs.FileInfo) bool {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := info.Mode().Perm()
	switch {
	case int(st.Uid) == o.uid:
		return perm&0o100 != 0
	case slices.Contains(o.gids, int(st.Gid)):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// writeFile writes a file the server must read and gives it to the owner.
func (o *owner) writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return o.chown(path)
}
