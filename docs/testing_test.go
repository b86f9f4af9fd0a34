package docs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/wftest"
)

// Every test file example of testing.md (a ```yaml block starting with
// definition:) passes through the runner.
func TestTestingPageExamplesPass(t *testing.T) {
	t.Parallel()
	bs, err := blocks("testing.md")
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	found := 0
	for _, b := range bs {
		if (b.lang != "yaml" && b.lang != "yml") || !strings.HasPrefix(b.body, "definition:") {
			continue
		}
		found++
		f, err := wftest.Parse([]byte(b.body))
		if err != nil {
			t.Errorf("%s: %v", b.where(), err)
			continue
		}
		f.Path = b.where()
		checkPasses(t, r, f, 0)
	}
	if found < 6 {
		t.Errorf("found %d test file examples in testing.md, want one per construct", found)
	}
}

// Every cookbook recipe has a test file beside it, and every test file
// of the cookbook passes, each test in under 100 ms.
func TestCookbookTestFilesPass(t *testing.T) {
	t.Parallel()
	files, err := wftest.Find([]string{"cookbook"})
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(t)
	tested := map[string]bool{}
	for _, path := range files {
		f, err := wftest.Load(path)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if doc, err := f.DefinitionDoc(); err == nil {
			if m, err := wftest.Compile(doc); err == nil {
				tested[m.Key] = true
			}
		}
		checkPasses(t, r, f, 100*time.Millisecond)
	}
	recipes, _ := filepath.Glob("cookbook/*.md")
	for _, md := range recipes {
		bs, err := blocks(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if key := definitionKey(b); key != "" && !tested[key] {
				t.Errorf("%s: recipe %s has no test file in cookbook/", b.where(), key)
			}
		}
	}
}

// The recipes' definitions the test files name (cookbook/KEY.yaml) are
// the recipes' own blocks, byte for byte.
func TestCookbookDefinitionFilesMatchRecipes(t *testing.T) {
	t.Parallel()
	recipes, _ := filepath.Glob("cookbook/*.md")
	seen := 0
	for _, md := range recipes {
		bs, err := blocks(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			key := definitionKey(b)
			if key == "" {
				continue
			}
			seen++
			raw, err := os.ReadFile(filepath.Join("cookbook", key+".yaml"))
			if err != nil {
				t.Errorf("%s: %v (extract the block into it)", b.where(), err)
				continue
			}
			if string(raw) != b.body {
				t.Errorf("%s: cookbook/%s.yaml differs from the recipe's block: copy the block into it again", b.where(), key)
			}
		}
	}
	if seen < 10 {
		t.Errorf("found %d recipe definitions", seen)
	}
}

func definitionKey(b block) string {
	if !b.isDefinition() {
		return ""
	}
	first := strings.SplitN(b.body, "\n", 2)[0]
	return strings.TrimSpace(strings.TrimPrefix(first, "key:"))
}

func newRunner(t *testing.T) *wftest.Runner {
	t.Helper()
	r, err := wftest.NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkPasses runs a file's tests, each within limit (0: any time). A
// test's time is its best of three runs, so that a loaded machine does
// not fail it.
func checkPasses(t *testing.T, r *wftest.Runner, f *wftest.File, limit time.Duration) {
	t.Helper()
	best := map[string]time.Duration{}
	var res []wftest.Result
	for range 3 {
		var err error
		if res, err = timedRun(r, f, best); err != nil {
			t.Errorf("%s: %v", f.Path, err)
			return
		}
	}
	for _, x := range res {
		if x.Err != nil {
			t.Errorf("%s: %s: %v", f.Path, x.Name, x.Err)
		}
		for _, line := range x.Failures {
			t.Errorf("%s: %s: %s", f.Path, x.Name, line)
		}
		if limit > 0 && best[x.Name] > limit {
			t.Errorf("%s: %s took %s, over %s", f.Path, x.Name, best[x.Name], limit)
		}
	}
}

// timedRun runs the file, keeping each test's shortest time in best.
func timedRun(r *wftest.Runner, f *wftest.File, best map[string]time.Duration) ([]wftest.Result, error) {
	last := time.Now()
	return r.RunFileEach(context.Background(), f, nil, func(x wftest.Result) {
		took := time.Since(last)
		if b, ok := best[x.Name]; !ok || took < b {
			best[x.Name] = took
		}
		last = time.Now()
	})
}
