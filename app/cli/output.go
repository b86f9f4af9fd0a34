package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ductor/ductor/app/jsonvalue"
)

// Output formats of read commands.
const (
	outputJSON  = "json"
	outputTable = "table"
)

// outputFlag registers --output: a table on a terminal, JSON otherwise.
func outputFlag(fs *flags, env Env) *string {
	def := outputJSON
	if isTerminal(env.Stdout) {
		def = outputTable
	}
	return fs.String("output", def, "json or table (default: table on a terminal, else json)")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// table is a read command's answer as rows under a header.
type table struct {
	header []string
	rows   [][]string
	// footer lines follow the rows (the next page's cursor, say).
	footer []string
}

func (t *table) add(cells ...any) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = cellText(c)
	}
	t.rows = append(t.rows, row)
}

// cellText shows a value compactly: times in UTC to the second, nil as
// "-", anything structured as JSON.
func cellText(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if x == "" {
			return "-"
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t.UTC().Format("2006-01-02 15:04:05")
		}
		return x
	case float64:
		return fmt.Sprint(x)
	case bool:
		return fmt.Sprint(x)
	case []string:
		return strings.Join(x, ",")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// render prints v as indented JSON, or as the table tab builds from it.
func render(env Env, format string, v any, tab func(v any) *table) error {
	switch format {
	case outputJSON:
		return writeJSON(env, v)
	case outputTable:
		return writeTable(env.Stdout, tab(v))
	}
	return usagef("--output must be json or table, not %q", format)
}

// writeJSON prints v indented, numbers as the API sent them.
func writeJSON(env Env, v any) error {
	raw, err := jsonvalue.Marshal(v)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = env.Stdout.Write(out.Bytes())
	return err
}

func writeTable(w io.Writer, t *table) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range t.footer {
		fmt.Fprintln(w, f)
	}
	return nil
}

// obj reads a decoded JSON object's fields for tables.
type obj map[string]any

func (o obj) get(path ...string) any {
	var v any = map[string]any(o)
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func (o obj) list(key string) []obj {
	l, _ := o[key].([]any)
	out := make([]obj, 0, len(l))
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, obj(m))
		}
	}
	return out
}

func asObj(v any) obj {
	m, _ := v.(map[string]any)
	return obj(m)
}

// nextPage is the footer pointing at the next page, if any.
func nextPage(o obj, command string) []string {
	c, _ := o["next_cursor"].(string)
	if c == "" {
		return nil
	}
	return []string{"next page: " + command + " --cursor " + c}
}
