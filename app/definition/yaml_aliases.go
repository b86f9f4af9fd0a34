package definition

import (
	"bytes"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxAliasValues caps the values YAML aliases may add to a document. An
// alias repeats its anchor's whole value, so a few hundred bytes of
// anchors of aliases can stand for millions of values; the expansion is
// counted on the syntax tree, before anything is decoded.
const MaxAliasValues = 10_000

// CheckYAMLAliases refuses a YAML document whose aliases would expand it
// by more than [MaxAliasValues] values. A document that does not parse is
// left for the decoder to report.
func CheckYAMLAliases(doc []byte) error {
	if !bytes.ContainsRune(doc, '*') {
		return nil // no alias without one
	}
	file, err := parser.ParseBytes(doc, 0)
	if err != nil {
		return nil
	}
	for _, d := range file.Docs {
		c := aliasCounter{anchors: map[string]int{}}
		c.size(d.Body)
		if c.added > MaxAliasValues {
			return syntaxError("YAML: aliases expand the document by more than %d values", MaxAliasValues)
		}
	}
	return nil
}

// aliasCounter sizes a tree with its aliases expanded; each anchor's size
// is kept, so the count costs one pass over the written nodes.
type aliasCounter struct {
	anchors map[string]int
	added   int // values the aliases stand for
}

func (c *aliasCounter) size(n ast.Node) int {
	if c.added > MaxAliasValues {
		return 0 // already refused
	}
	switch x := n.(type) {
	case nil:
		return 0
	case *ast.AnchorNode:
		s := c.size(x.Value)
		c.anchors[x.Name.GetToken().Value] = s
		return s
	case *ast.AliasNode:
		s := c.anchors[x.Value.GetToken().Value]
		c.added += s
		return s
	case *ast.TagNode:
		return c.size(x.Value)
	case *ast.MappingKeyNode:
		return c.size(x.Value)
	case *ast.MappingValueNode:
		return c.size(x.Key) + c.size(x.Value)
	case *ast.MappingNode:
		return 1 + c.sum(x.Values)
	case *ast.SequenceNode:
		return 1 + c.sum(x.Values)
	}
	return 1
}

func (c *aliasCounter) sum(ns any) int {
	total := 0
	switch l := ns.(type) {
	case []*ast.MappingValueNode:
		for _, e := range l {
			total += c.size(e)
		}
	case []ast.Node:
		for _, e := range l {
			total += c.size(e)
		}
	}
	return total
}
