package definition

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// A NUL character has no place in a definition, and the database refuses
// it in text and JSON alike: a document holding one, as a byte or as an
// escape in any key or string, is refused with every place it occurs.

// rawNULProblem reports a NUL byte in the source, by line.
func rawNULProblem(doc []byte) error {
	i := bytes.IndexByte(doc, 0)
	if i < 0 {
		return nil
	}
	line := bytes.Count(doc[:i], []byte("\n")) + 1
	return syntaxError("the document contains a NUL byte (line %d)", line)
}

// nulProblems lists every key and string of tree that holds a NUL
// character, ordered by path.
func nulProblems(tree any) error {
	var ps problems
	findNUL(tree, "", &ps)
	if len(ps.list) == 0 {
		return nil
	}
	sort.SliceStable(ps.list, func(i, j int) bool { return ps.list[i].Path < ps.list[j].Path })
	return ps.err()
}

func findNUL(v any, p path, ps *problems) {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			ps.add(p, "", "must not contain a NUL character")
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 {
				ps.add(p, "", "has a key containing a NUL character: %s", quoteKey(k))
				continue
			}
			findNUL(e, p.dot(k), ps)
		}
	case []any:
		for i, e := range x {
			findNUL(e, p.at(i), ps)
		}
	}
}

func quoteKey(k string) string { return fmt.Sprintf("%q", k) }
