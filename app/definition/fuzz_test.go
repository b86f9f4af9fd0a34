package definition

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzCompile: compiling never panics; a document that compiles hashes the
// same every time, and its order lists every step once with every edge
// pointing forward.
func FuzzCompile(f *testing.F) {
	docs, _ := filepath.Glob("testdata/golden/*")
	for _, d := range docs {
		if b, err := os.ReadFile(d); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(one(taskA)))
	f.Add([]byte(withEdges(one(taskA, `{ref: b, type: task, with: {handler: h}}`), `{from: a, to: b}`, `{from: b, to: a}`)))
	f.Fuzz(func(t *testing.T, doc []byte) {
		c, err := Compile(doc, FormatAuto)
		if err != nil {
			return
		}
		again, err := Compile(doc, FormatAuto)
		if err != nil || again.Hash != c.Hash {
			t.Fatalf("recompile: %v, hash %s then %s", err, c.Hash, again.Hash)
		}
		checkOrder(t, c.Manifest)
	})
}

func checkOrder(t *testing.T, m *Manifest) {
	t.Helper()
	pos := make(map[string]int, len(m.Order))
	for i, r := range m.Order {
		if _, dup := pos[r]; dup {
			t.Fatalf("%s twice in order", r)
		}
		pos[r] = i
	}
	if len(pos) != len(m.Steps) {
		t.Fatalf("order has %d steps, manifest %d", len(pos), len(m.Steps))
	}
	for _, e := range m.Edges {
		if pos[e.From] >= pos[e.To] {
			t.Fatalf("edge %s → %s goes backwards in %v", e.From, e.To, m.Order)
		}
	}
	for _, r := range m.Entrypoints {
		for _, e := range m.Edges {
			if e.To == r {
				t.Fatalf("entrypoint %s has incoming edge from %s", r, e.From)
			}
		}
	}
}
