package pages

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/ductor/ductor/app/definition"
)

// problemLines is the line (from 1; 0 when unknown) each problem is on in
// src: a parse error's from the parser, a compiler problem's from its path
// (steps[3].with.url is the line of that key, or of the nearest key above
// it the document has, as for a required field left out).
func problemLines(src []byte, ps []definition.Problem) []int {
	out := make([]int, len(ps))
	if len(ps) == 0 || len(src) == 0 {
		return out
	}
	file, err := parser.ParseBytes(src, 0)
	if err != nil {
		line := syntaxLine(src, err)
		for i, p := range ps {
			if p.Path == "" {
				out[i] = line
			}
		}
		return out
	}
	if len(file.Docs) == 0 || file.Docs[0] == nil {
		return out
	}
	body := file.Docs[0].Body
	for i, p := range ps {
		if p.Path == "" {
			out[i] = parseMessageLine(p.Message)
			continue
		}
		out[i] = pathLine(body, pathSegments(p.Path))
	}
	return out
}

// syntaxLine is where the parser stopped on src.
func syntaxLine(src []byte, err error) int {
	var se *yaml.SyntaxError
	if errors.As(err, &se) && se.Token != nil && se.Token.Position != nil {
		return se.Token.Position.Line
	}
	var je *json.SyntaxError
	if errors.As(json.Unmarshal(src, new(any)), &je) {
		return 1 + strings.Count(string(src[:min(int(je.Offset), len(src))]), "\n")
	}
	return parseMessageLine(err.Error())
}

// messageLine finds the parser's "[line:column]" in a message.
var messageLine = regexp.MustCompile(`\[(\d+):(\d+)\]`)

func parseMessageLine(msg string) int {
	m := messageLine.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// segment is one step of a problem's path: a key, or an index (key "").
type segment struct {
	key   string
	index int
}

// pathSegments splits "steps[3].with.url" into steps, [3], with, url.
func pathSegments(p string) []segment {
	var out []segment
	for _, part := range strings.Split(p, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, segment{key: name, index: -1})
		}
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(num)
			if !ok || err != nil {
				return out
			}
			out = append(out, segment{index: n})
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}

// pathLine follows segs from n and returns the line of the deepest node
// it reaches: a key's line, or a list item's.
func pathLine(n ast.Node, segs []segment) int {
	line := 0
	for _, s := range segs {
		n = unwrap(n)
		var next ast.Node
		at := 0
		switch v := n.(type) {
		case *ast.MappingNode:
			if s.index < 0 {
				next, at = valueOf(v.Values, s.key)
			}
		case *ast.MappingValueNode:
			if s.index < 0 {
				next, at = valueOf([]*ast.MappingValueNode{v}, s.key)
			}
		case *ast.SequenceNode:
			if s.index >= 0 && s.index < len(v.Values) {
				next = v.Values[s.index]
				at = nodeLine(next)
			}
		}
		if next == nil {
			break
		}
		n, line = next, at
	}
	return line
}

func valueOf(values []*ast.MappingValueNode, key string) (ast.Node, int) {
	for _, mv := range values {
		if mv == nil || mv.Key == nil {
			continue
		}
		if k := mv.Key.GetToken(); k != nil && k.Value == key {
			return mv.Value, nodeLine(mv.Key)
		}
	}
	return nil, 0
}

// nodeLine is the line a node starts on: a block mapping's first key.
func nodeLine(n ast.Node) int {
	n = unwrap(n)
	if m, ok := n.(*ast.MappingNode); ok && !m.IsFlowStyle && len(m.Values) > 0 && m.Values[0].Key != nil {
		n = m.Values[0].Key
	}
	if mv, ok := n.(*ast.MappingValueNode); ok && mv.Key != nil {
		n = mv.Key
	}
	if n == nil {
		return 0
	}
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

func unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.AnchorNode:
			n = v.Value
		default:
			return n
		}
	}
}
