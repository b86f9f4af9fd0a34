// Package transcript replays the scenario files that the pure core's tests
// keep in testdata/*.txt, in the manner of etcd raft's: blocks of commands,
// a ---- line, and the expected output up to a blank line. Leading # lines
// are a file's header. With update, the expected parts are rewritten with
// the actual output, to be reviewed like code.
//
// It is for tests only.
package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Replay runs every testdata/*.txt file as a subtest. For each file it
// asks start for the function that answers that file's blocks (a file may
// carry state from one block to the next) and compares each answer with
// the block's expected output.
func Replay(t *testing.T, update bool, start func(t *testing.T) func(cmd []string) string) {
	t.Helper()
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no transcripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { replayFile(t, f, update, start(t)) })
	}
}

func replayFile(t *testing.T, path string, update bool, do func(cmd []string) string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	header, blocks := Parse(string(raw))
	var out strings.Builder
	out.WriteString(header)
	for _, b := range blocks {
		got := do(b.Cmd)
		if !update && got != b.Want {
			t.Errorf("%s: after\n%s\ngot:\n%s\nwant:\n%s", path, strings.Join(b.Cmd, "\n"), got, b.Want)
		}
		fmt.Fprintf(&out, "%s\n----\n%s\n\n", strings.Join(b.Cmd, "\n"), got)
	}
	if update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Block is one step of a transcript: its command lines and the output
// expected of them.
type Block struct {
	Cmd  []string
	Want string
}

// Parse splits a transcript into its header (the leading # and blank
// lines) and its blocks.
func Parse(src string) (string, []Block) {
	lines := strings.Split(src, "\n")
	var header strings.Builder
	i := 0
	for ; i < len(lines) && (strings.HasPrefix(lines[i], "#") || strings.TrimSpace(lines[i]) == ""); i++ {
		header.WriteString(lines[i] + "\n")
	}
	var blocks []Block
	for i < len(lines) {
		var b Block
		for ; i < len(lines) && lines[i] != "----"; i++ {
			if strings.TrimSpace(lines[i]) != "" || len(b.Cmd) > 0 {
				b.Cmd = append(b.Cmd, lines[i])
			}
		}
		i++
		var want []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		for ; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
		}
		if len(b.Cmd) > 0 {
			b.Want = strings.Join(want, "\n")
			blocks = append(blocks, b)
		}
	}
	return header.String(), blocks
}
