package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/wftest"
)

const testSynopsis = "test [PATH...] [-run REGEX] [--update] [--junit FILE] | test --replay RUN_ID [--definition FILE]"

// errTestsFailed makes `ductor test` exit non-zero.
var errTestsFailed = errors.New("tests failed")

// runTest handles `ductor test`: it runs *.test.yaml files in memory, in
// virtual time, without a database or server (docs/testing.md); with
// --replay it replays a finished run through a definition.
func runTest(ctx context.Context, env Env, args []string) error {
	fs := newFlags(testSynopsis, env)
	fs.about = "Runs workflow tests (*.test.yaml, default: the current folder) in memory.\n"
	filter := fs.String("run", "", "run only the tests whose name matches this regular expression")
	update := fs.Bool("update", false, "write each failing test's observed outcome as its expectation")
	junit := fs.String("junit", "", "write a JUnit XML report to this file")
	replay := fs.String("replay", "", "replay this finished run (DUCTOR_URL, DUCTOR_API_KEY)")
	defFile := fs.String("definition", "", "with --replay: the definition file to replay through (default: the latest published version)")
	paths, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	if *replay != "" {
		return runReplay(ctx, env, *replay, *defFile)
	}
	re, err := compileFilter(*filter)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	return runTestFiles(ctx, env, paths, re, *update, *junit)
}

func compileFilter(s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, usagef("-run: %v", err)
	}
	return re, nil
}

// timedResult is a test's result and how long it took on the wall.
type timedResult struct {
	wftest.Result
	took time.Duration
}

func runTestFiles(ctx context.Context, env Env, paths []string, re *regexp.Regexp, update bool, junit string) error {
	files, err := wftest.Find(paths)
	if err != nil {
		return err
	}
	r, err := wftest.NewRunner()
	if err != nil {
		return err
	}
	var all []timedResult
	for _, path := range files {
		res, err := testFile(ctx, r, path, re, update)
		if err != nil {
			res = []timedResult{{Result: wftest.Result{File: path, Name: "(file)", Err: err}}}
		}
		printResults(env, res)
		all = append(all, res...)
	}
	if junit != "" {
		if err := writeJUnit(junit, all); err != nil {
			return err
		}
	}
	return summarise(env, all)
}

// testFile runs one file's tests (and rewrites its expectations with
// update).
func testFile(ctx context.Context, r *wftest.Runner, path string, re *regexp.Regexp, update bool) ([]timedResult, error) {
	f, err := wftest.Load(path)
	if err != nil {
		return nil, err
	}
	var out []timedResult
	last := time.Now()
	res, err := r.RunFileEach(ctx, f, re, func(x wftest.Result) {
		now := time.Now()
		out = append(out, timedResult{Result: x, took: now.Sub(last)})
		last = now
	})
	if err != nil {
		return nil, err
	}
	if !update {
		return out, nil
	}
	text, err := wftest.Update(f, res)
	if err != nil {
		return nil, err
	}
	return out, os.WriteFile(path, text, 0o644)
}

func printResults(env Env, res []timedResult) {
	for _, x := range res {
		if x.Passed() {
			fmt.Fprintf(env.Stdout, "ok   %s: %s (%s, %d ticks)\n", x.File, x.Name, x.took.Round(time.Microsecond), x.Outcome.Ticks)
			continue
		}
		fmt.Fprintf(env.Stdout, "FAIL %s: %s\n", x.File, x.Name)
		for _, line := range failureLines(x.Result) {
			fmt.Fprintf(env.Stdout, "    %s\n", strings.ReplaceAll(line, "\n", "\n    "))
		}
	}
}

func failureLines(x wftest.Result) []string {
	if x.Err != nil {
		return []string{x.Err.Error()}
	}
	return x.Failures
}

func summarise(env Env, all []timedResult) error {
	failed := 0
	for _, x := range all {
		if !x.Passed() {
			failed++
		}
	}
	fmt.Fprintf(env.Stdout, "%d passed, %d failed\n", len(all)-failed, failed)
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d", errTestsFailed, failed, len(all))
	}
	return nil
}

// junitSuites is the JUnit XML report: a suite per file.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnit(path string, all []timedResult) error {
	var rep junitSuites
	index := map[string]int{}
	for _, x := range all {
		i, ok := index[x.File]
		if !ok {
			i = len(rep.Suites)
			index[x.File] = i
			rep.Suites = append(rep.Suites, junitSuite{Name: x.File})
		}
		s := &rep.Suites[i]
		c := junitCase{Name: x.Name, ClassName: x.File, Time: strconv.FormatFloat(x.took.Seconds(), 'f', 6, 64)}
		if !x.Passed() {
			lines := failureLines(x.Result)
			c.Failure = &junitFailure{Message: strings.SplitN(lines[0], "\n", 2)[0], Text: strings.Join(lines, "\n")}
			s.Failures++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	b, err := xml.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append([]byte(xml.Header), append(b, '\n')...), 0o644)
}

// runReplay downloads a finished run and replays it through the
// definition file, or through its definition's latest published version.
func runReplay(ctx context.Context, env Env, runID, defFile string) error {
	c := newAPIClient(env)
	rec, err := fetchRecorded(ctx, c, runID)
	if err != nil {
		return err
	}
	doc, where, err := replayDefinition(ctx, c, rec.Definition, defFile)
	if err != nil {
		return err
	}
	m, err := wftest.Compile(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	r, err := wftest.NewRunner()
	if err != nil {
		return err
	}
	div, o, err := r.Replay(ctx, m, rec)
	if err != nil {
		return fmt.Errorf("replay run %s: %w", runID, err)
	}
	if div != nil {
		fmt.Fprintf(env.Stdout, "run %s (%s v%d) through %s: %s\n", runID, rec.Definition, rec.Version, where, div)
		return fmt.Errorf("%w: the replay diverges", errTestsFailed)
	}
	fmt.Fprintf(env.Stdout, "run %s (%s v%d) through %s: no difference (%d transitions, %s)\n", runID, rec.Definition, rec.Version, where, len(o.History()), o.Status)
	return nil
}

// fetchRecorded reads the run with its nodes and attempts, and its
// whole history.
func fetchRecorded(ctx context.Context, c *apiClient, runID string) (*wftest.Recorded, error) {
	var rec wftest.Recorded
	base := "/api/v1/runs/" + url.PathEscape(runID)
	if err := c.do(ctx, "GET", base, nil, &rec); err != nil {
		return nil, err
	}
	if !engine.RunStatus(rec.Status).Terminal() {
		return nil, fmt.Errorf("run %s is %s: only a finished run can be replayed", runID, rec.Status)
	}
	for _, n := range rec.Nodes {
		if n.Type != "scatter" {
			continue
		}
		children, err := fetchChildren(ctx, c, base, n.Ref)
		if err != nil {
			return nil, err
		}
		rec.Nodes = append(rec.Nodes, children...)
	}
	history, err := fetchHistory(ctx, c, base)
	if err != nil {
		return nil, err
	}
	rec.History = history
	return &rec, nil
}

// fetchChildren reads every child of a scatter, page by page.
func fetchChildren(ctx context.Context, c *apiClient, base, scatter string) ([]wftest.RecordedNode, error) {
	var out []wftest.RecordedNode
	for after := int64(-1); ; {
		var page struct {
			Children  []wftest.RecordedNode `json:"children"`
			NextAfter *int64                `json:"next_after"`
		}
		path := fmt.Sprintf("%s/nodes/%s/children?after=%d&limit=500", base, url.PathEscape(scatter), after)
		if err := c.do(ctx, "GET", path, nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Children...)
		if page.NextAfter == nil {
			return out, nil
		}
		after = *page.NextAfter
	}
}

// fetchHistory reads a run's whole history, page by page.
func fetchHistory(ctx context.Context, c *apiClient, base string) ([]engine.Transition, error) {
	var out []engine.Transition
	for after := int64(0); ; {
		var page struct {
			Transitions []engine.Transition `json:"transitions"`
		}
		if err := c.do(ctx, "GET", fmt.Sprintf("%s/history?after=%d&limit=500", base, after), nil, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Transitions...)
		if len(page.Transitions) < 500 {
			return out, nil
		}
		after = page.Transitions[len(page.Transitions)-1].Seq
	}
}

// replayDefinition is the file's contents, or the source of the
// definition's latest published version.
func replayDefinition(ctx context.Context, c *apiClient, key, file string) ([]byte, string, error) {
	if file != "" {
		doc, err := os.ReadFile(file)
		return doc, file, err
	}
	var def struct {
		Latest int `json:"latest_version"`
	}
	path := "/api/v1/definitions/" + url.PathEscape(key)
	if err := c.do(ctx, "GET", path, nil, &def); err != nil {
		return nil, "", err
	}
	var ver struct {
		Source string `json:"source"`
	}
	if err := c.do(ctx, "GET", path+"/versions/"+strconv.Itoa(def.Latest), nil, &ver); err != nil {
		return nil, "", err
	}
	return []byte(ver.Source), fmt.Sprintf("%s v%d", key, def.Latest), nil
}
