package definition

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden manifests in testdata/golden")

// TestGolden compiles every document in testdata/golden and compares the
// manifest and hash with NAME.golden.json. Run with -update to rewrite
// them, then review the diff like code.
func TestGolden(t *testing.T) {
	t.Parallel()
	docs, err := filepath.Glob("testdata/golden/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		if strings.HasSuffix(doc, ".golden.json") {
			continue
		}
		t.Run(filepath.Base(doc), func(t *testing.T) {
			t.Parallel()
			checkGolden(t, doc)
		})
	}
}

func checkGolden(t *testing.T, doc string) {
	src, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(src, FormatAuto)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	got := goldenBytes(t, c)
	golden := strings.TrimSuffix(doc, filepath.Ext(doc)) + ".golden.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the compiled manifest; run go test -update and review the diff\ngot:\n%s", golden, got)
	}
}

// goldenBytes is the hash and the canonical manifest, indented.
func goldenBytes(t *testing.T, c *Compiled) []byte {
	var b bytes.Buffer
	b.WriteString(`{"manifest_hash":"` + c.Hash + `","manifest":`)
	b.Write(c.JSON)
	b.WriteString("}")
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}
