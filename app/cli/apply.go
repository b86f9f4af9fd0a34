package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ductor/ductor/app/definition"
)

const applyUsage = "ductor apply -f FILE [-f FILE]... [--dry-run]"

// runApply handles `apply -f FILE…`: it publishes each definition through
// the API (DUCTOR_URL, DUCTOR_API_KEY) and prints `KEY vN HASH (created)`
// or `(unchanged)` per file; with --dry-run it only compiles, printing
// `KEY HASH (valid)`. A document without a key takes its file's name. Every
// problem of an invalid document is printed as `FILE: PATH: MESSAGE`, the
// other files are still applied, and the command fails.
func runApply(ctx context.Context, env Env, args []string) error {
	fs := newFlags("apply", env)
	var files multiFlag
	fs.Var(&files, "f", "a definition file (.yaml, .yml or .json); repeat for several")
	dryRun := fs.Bool("dry-run", false, "only compile, publish nothing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files = append(files, fs.Args()...)
	if len(files) == 0 {
		return fmt.Errorf("%w: %s", ErrUsage, applyUsage)
	}
	c, err := newAPIClient(env)
	if err != nil {
		return err
	}
	failed := 0
	for _, file := range files {
		if err := applyFile(ctx, env, c, file, *dryRun); err != nil {
			failed++
			reportApplyError(env, file, err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d definition files failed", failed, len(files))
	}
	return nil
}

// applyDoc is one file's definition, ready to send.
type applyDoc struct {
	key, contentType string
	body             []byte
}

func applyFile(ctx context.Context, env Env, c *apiClient, file string, dryRun bool) error {
	d, err := readApplyDoc(file)
	if err != nil {
		return err
	}
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

// readApplyDoc reads a file, picks its format by extension (else by its
// first byte) and finds its key, filling in the file's name when it has
// none.
func readApplyDoc(file string) (applyDoc, error) {
	body, err := os.ReadFile(file)
	if err != nil {
		return applyDoc{}, err
	}
	f := definition.Detect(body, formatOfFile(file))
	d := applyDoc{body: body, contentType: "application/json"}
	if f == definition.FormatYAML {
		d.contentType = "application/yaml"
	}
	key, present, err := definition.DocumentKey(body, f)
	if err != nil {
		return applyDoc{}, err
	}
	if !present {
		key = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		d.body = definition.WithKey(body, f, key)
	}
	d.key = key
	return d, nil
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
