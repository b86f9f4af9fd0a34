package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ductor/ductor/app/definition"
)

const applyUsage = "ductor apply -f FILE|DIR [-f FILE|DIR]... [--dry-run]"

// runApply handles `apply -f FILE…`: it publishes each definition through
// the API (DUCTOR_URL, DUCTOR_API_KEY) and prints `KEY vN HASH (created)`
// or `(unchanged)` per document; with --dry-run it only compiles, printing
// `KEY HASH (valid)`. A directory stands for its .yaml, .yml and .json
// files (recursively, in path order); a YAML file may hold several
// documents separated by `---`. A lone document without a key takes its
// file's name. Every problem of an invalid document is printed as
// `FILE: PATH: MESSAGE` (`FILE#N` for the Nth document of a file), the
// other documents are still applied, and the command fails.
func runApply(ctx context.Context, env Env, args []string) error {
	fs := newFlags("apply -f FILE|DIR [-f FILE|DIR]... [--dry-run]", env)
	var paths multiFlag
	fs.Var(&paths, "f", "a definition file (.yaml, .yml or .json) or a directory of them; repeat for several")
	dryRun := fs.Bool("dry-run", false, "only compile, publish nothing")
	rest, err := fs.parseArgs(args)
	if err != nil {
		return err
	}
	paths = append(paths, rest...)
	if len(paths) == 0 {
		return want(applyUsage)
	}
	docs, unread := collectDocs(env, paths)
	if len(docs) == 0 && unread == 0 {
		return usagef("no definition files (.yaml, .yml, .json) in %s", strings.Join(paths, ", "))
	}
	c := newAPIClient(env)
	failed := unread
	for _, d := range docs {
		if err := applyDoc(ctx, env, c, d, *dryRun); err != nil {
			failed++
			reportApplyError(env, d.where, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d definitions failed", failed, len(docs)+unread)
	}
	return nil
}

// applyDocument is one definition, ready to send.
type applyDocument struct {
	where, key, contentType string
	body                    []byte
}

// collectDocs reads every path into documents, reporting the ones it
// cannot read.
func collectDocs(env Env, paths []string) ([]applyDocument, int) {
	var docs []applyDocument
	failed := 0
	for _, p := range paths {
		files, err := definitionFiles(p)
		if err != nil {
			failed++
			reportApplyError(env, p, err)
			continue
		}
		for _, f := range files {
			ds, err := readApplyDocs(f)
			if err != nil {
				failed++
				reportApplyError(env, f, err)
				continue
			}
			docs = append(docs, ds...)
		}
	}
	return docs, failed
}

// definitionFiles is p itself, or the definition files under directory p.
func definitionFiles(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && formatOfFile(path) != definition.FormatAuto {
			files = append(files, path)
		}
		return err
	})
	sort.Strings(files)
	return files, err
}

func applyDoc(ctx context.Context, env Env, c *apiClient, d applyDocument, dryRun bool) error {
	if dryRun {
		var out struct {
			Hash string `json:"manifest_hash"`
		}
		if _, err := c.send(ctx, http.MethodPost, "/api/v1/compile", d.contentType, d.body, &out); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s %s (valid)\n", d.key, out.Hash)
		return nil
	}
	var out struct {
		Key     string `json:"key"`
		Version int    `json:"version"`
		Hash    string `json:"manifest_hash"`
	}
	status, err := c.send(ctx, http.MethodPost, "/api/v1/definitions/"+url.PathEscape(d.key)+"/versions", d.contentType, d.body, &out)
	if err != nil {
		return err
	}
	what := "unchanged"
	if status == http.StatusCreated {
		what = "created"
	}
	fmt.Fprintf(env.Stdout, "%s v%d %s (%s)\n", out.Key, out.Version, out.Hash, what)
	return nil
}

// readApplyDocs reads a file, picks its format by extension (else by its
// first byte), splits a YAML stream into its documents and finds each
// one's key; a lone document without one takes the file's name.
func readApplyDocs(file string) ([]applyDocument, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	f := definition.Detect(body, formatOfFile(file))
	parts := [][]byte{body}
	contentType := "application/json"
	if f == definition.FormatYAML {
		parts, contentType = splitYAML(body), "application/yaml"
	}
	var out []applyDocument
	for i, part := range parts {
		d := applyDocument{where: file, body: part, contentType: contentType}
		if len(parts) > 1 {
			d.where = fmt.Sprintf("%s#%d", file, i+1)
		}
		key, present, err := definition.DocumentKey(part, f)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %w", d.where, err)
		case !present && len(parts) > 1:
			return nil, fmt.Errorf("%s: a document of a multi-document file needs a key", d.where)
		case !present:
			key = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
			d.body = definition.WithKey(part, f, key)
		}
		d.key = key
		out = append(out, d)
	}
	return out, nil
}

// splitYAML splits a YAML stream at its `---` lines, dropping documents
// that hold nothing but comments and blank lines.
func splitYAML(body []byte) [][]byte {
	var out [][]byte
	var cur []string
	flush := func() {
		doc := strings.Join(cur, "\n")
		if hasContent(doc) {
			out = append(out, []byte(doc+"\n"))
		}
		cur = nil
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "---") && strings.TrimSpace(strings.SplitN(line[3:], "#", 2)[0]) == "" {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	if len(out) == 0 {
		return [][]byte{body}
	}
	return out
}

func hasContent(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && t != "..." {
			return true
		}
	}
	return false
}

func formatOfFile(file string) definition.Format {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".yaml", ".yml":
		return definition.FormatYAML
	case ".json":
		return definition.FormatJSON
	}
	return definition.FormatAuto
}

// reportApplyError prints every problem of an invalid definition, or the
// error, prefixed by the file.
func reportApplyError(env Env, file string, err error) {
	problems := problemsOf(err)
	if len(problems) == 0 {
		fmt.Fprintf(env.Stderr, "%s: %v\n", file, err)
		return
	}
	for _, p := range problems {
		fmt.Fprintf(env.Stderr, "%s: %s\n", file, p)
	}
}

// problemsOf lists the problems an error carries: a compiler's own, or
// the details of the API's 422.
func problemsOf(err error) []definition.Problem {
	var inv *definition.InvalidError
	if errors.As(err, &inv) {
		return inv.Problems
	}
	var ae *apiError
	var out []definition.Problem
	if errors.As(err, &ae) && ae.Code == "invalid_definition" {
		_ = json.Unmarshal(ae.Details, &out)
	}
	return out
}
