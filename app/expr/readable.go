package expr

import (
	"fmt"
	"regexp"
	"strings"
)

// CEL reports what its parser expected as a list of grammar tokens
// ("extraneous input '*' expecting {'[', '{', '(', '.', …}"), which tells
// a person little. readableIssue says what went wrong in words; the
// caller adds where (line and column), which the editor marks.
var readableRules = []struct {
	re  *regexp.Regexp
	out func([]string) string
}{
	{regexp.MustCompile(`^Syntax error: mismatched input '<EOF>'`), func([]string) string { return "the expression ends too early" }},
	{regexp.MustCompile(`^Syntax error: (?:extraneous|mismatched) input '(.*?)' expecting`), func(m []string) string { return "unexpected " + quote(m[1]) }},
	{regexp.MustCompile(`^Syntax error: missing '(.*?)' at '<EOF>'`), func(m []string) string { return "missing " + quote(m[1]) + " at the end" }},
	{regexp.MustCompile(`^Syntax error: missing '(.*?)' at '(.*?)'`), func(m []string) string { return "missing " + quote(m[1]) + " before " + quote(m[2]) }},
	{regexp.MustCompile(`^Syntax error: no viable alternative at input '(.*?)'$`), func(m []string) string { return "unexpected " + quote(lastToken(m[1])) }},
	{regexp.MustCompile(`^Syntax error: token recognition error at: '(.*?)'`), func(m []string) string { return "unexpected character " + quote(m[1]) }},
	{regexp.MustCompile(`^undeclared reference to '(.*?)'`), func(m []string) string { return "unknown name " + quote(m[1]) }},
	{regexp.MustCompile(`^found no matching overload for '(.*?)' applied to '\((.*)\)'`), func(m []string) string { return overloadText(m[1], m[2]) }},
	{regexp.MustCompile(`^Syntax error: (.*?) expecting \{.*$`), func(m []string) string { return strings.ToLower(m[1][:1]) + m[1][1:] }},
	{regexp.MustCompile(`^Syntax error: (.*)$`), func(m []string) string { return m[1] }},
}

// readableIssue rewrites one CEL diagnostic (already on one line).
func readableIssue(msg string) string {
	for _, r := range readableRules {
		if m := r.re.FindStringSubmatch(msg); m != nil {
			return r.out(m)
		}
	}
	return msg
}

// celOperators names CEL's internal operator functions as written.
var celOperators = map[string]string{
	"_+_": "+", "_-_": "-", "_*_": "*", "_/_": "/", "_%_": "%", "_<_": "<", "_<=_": "<=", "_>_": ">",
	"_>=_": ">=", "_==_": "==", "_!=_": "!=", "_&&_": "&&", "_||_": "||", "!_": "!", "-_": "-", "_[_]": "[…]", "@in": "in",
}

func overloadText(fn, args string) string {
	if op, ok := celOperators[fn]; ok {
		return fmt.Sprintf("%s cannot be applied to %s", op, strings.ReplaceAll(args, ", ", " and "))
	}
	return fmt.Sprintf("%s() does not take (%s)", fn, args)
}

func quote(s string) string { return "“" + s + "”" }

// lastToken is the end of the input ANTLR could not read, where the
// mistake is.
func lastToken(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return s
	}
	return f[len(f)-1]
}
