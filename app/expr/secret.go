package expr

import (
	"regexp"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// FuncSecret is secret("NAME"): a reference to a tenant secret, valid only
// in the fields that send one (an http step's url_expr, headers_expr and
// body_expr; the compiler refuses it elsewhere with [Program.Secrets]).
// It never reads the value: it evaluates to [SecretRef] of the name, a
// placeholder the http step replaces with the value as it sends the
// request, so no expression, stored parameter or record ever holds it.
const FuncSecret = "secret"

// SecretNamePattern is a tenant secret's name.
var SecretNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

const (
	secretRefOpen  = "${secret:"
	secretRefClose = "}"
)

// secretRefPattern finds the references in a string.
var secretRefPattern = regexp.MustCompile(`\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}`)

// secretCallPattern finds secret("NAME") calls in an expression's source;
// the compiler admits no other form (Program.Secrets).
var secretCallPattern = regexp.MustCompile(`\bsecret\(\s*"([A-Za-z_][A-Za-z0-9_]{0,63})"\s*\)`)

// SecretCalls returns the names the expression src calls secret() with,
// in order, each once: the only references an http step may resolve,
// so that a placeholder arriving in data (a run's input, a signal's
// payload) is sent as the text it is, never as a secret's value.
func SecretCalls(src string) []string {
	if !strings.Contains(src, FuncSecret+"(") {
		return nil
	}
	var out []string
	for _, m := range secretCallPattern.FindAllStringSubmatch(src, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// SecretRef is what secret(name) evaluates to.
func SecretRef(name string) string { return secretRefOpen + name + secretRefClose }

// SecretRefs returns the names s references, in order, each once.
func SecretRefs(s string) []string {
	if !strings.Contains(s, secretRefOpen) {
		return nil
	}
	var out []string
	for _, m := range secretRefPattern.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// ReplaceSecretRefs replaces each reference in s to a name of values by
// its value; other text, and references to other names, are kept.
func ReplaceSecretRefs(s string, values map[string]string) string {
	if !strings.Contains(s, secretRefOpen) {
		return s
	}
	return secretRefPattern.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := values[m[len(secretRefOpen):len(m)-len(secretRefClose)]]; ok {
			return v
		}
		return m
	})
}

func secretOptions() []cel.EnvOption {
	return []cel.EnvOption{cel.Function(FuncSecret,
		cel.Overload("secret_string", []*cel.Type{cel.StringType}, cel.StringType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				name, ok := v.(types.String)
				if !ok || !SecretNamePattern.MatchString(string(name)) {
					return types.NewErr("secret(): a secret's name must match [A-Za-z_][A-Za-z0-9_]{0,63}")
				}
				return types.String(SecretRef(string(name)))
			})))}
}

// Secrets returns the names of the secrets the program references, in
// order, each once, and a problem when a reference's argument is not a
// literal name: a secret's name is always written out, so the compiler
// can check it and see every secret a step uses.
func (p *Program) Secrets() (names []string, problem string) {
	celast.PostOrderVisit(p.ast.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if e.Kind() != celast.CallKind || e.AsCall().FunctionName() != FuncSecret {
			return
		}
		args := e.AsCall().Args()
		var name string
		if len(args) == 1 && args[0].Kind() == celast.LiteralKind {
			name, _ = args[0].AsLiteral().Value().(string)
		}
		switch {
		case name == "":
			problem = `secret() takes a literal name: secret("NAME")`
		case !SecretNamePattern.MatchString(name):
			problem = `secret(): a secret's name must match [A-Za-z_][A-Za-z0-9_]{0,63}, not "` + name + `"`
		case !slices.Contains(names, name):
			names = append(names, name)
		}
	}))
	return names, problem
}
