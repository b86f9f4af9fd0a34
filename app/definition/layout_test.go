package definition

import "testing"

// The editor's layout is accepted whatever its shape, and ignored: the
// manifest is the same with it and without.
func TestLayoutIsIgnored(t *testing.T) {
	t.Parallel()
	plain := "key: k\nsteps:\n  - {ref: a, type: task, with: {handler: x}}\n"
	want, err := Compile([]byte(plain), FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []string{"{a: {x: 10, y: -4.5}}", "{nowhere: {x: 1, y: 2}}", "[1, 2]", "null"} {
		got, err := Compile([]byte(plain+"layout: "+layout+"\n"), FormatYAML)
		if err != nil {
			t.Fatalf("layout %s: %v", layout, err)
		}
		if got.Hash != want.Hash {
			t.Errorf("layout %s changes the hash: %s, not %s", layout, got.Hash, want.Hash)
		}
	}
}
