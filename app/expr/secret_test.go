package expr_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/app/expr"
)

func TestSecretIsAReferenceNotAValue(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	p, err := env.Compile(`"Bearer " + secret("API_TOKEN") + secret("API_TOKEN") + secret("OTHER")`, expr.KindString)
	if err != nil {
		t.Fatal(err)
	}
	if names, problem := p.Secrets(); problem != "" || len(names) != 2 || names[0] != "API_TOKEN" || names[1] != "OTHER" {
		t.Errorf("secrets = %v, %q", names, problem)
	}
	v, err := p.Eval(context.Background(), expr.Vars{})
	if err != nil || v != "Bearer ${secret:API_TOKEN}${secret:API_TOKEN}${secret:OTHER}" {
		t.Fatalf("eval = %v, %v", v, err)
	}
	if got := expr.ReplaceSecretRefs(v.(string), map[string]string{"API_TOKEN": "t"}); got != "Bearer tt${secret:OTHER}" {
		t.Errorf("replace = %q", got)
	}
	if refs := expr.SecretRefs(v.(string)); len(refs) != 2 {
		t.Errorf("refs = %v", refs)
	}
	for src, want := range map[string]string{
		`secret(input.name)`: `secret() takes a literal name: secret("NAME")`,
		`secret("bad-name")`: `secret(): a secret's name must match [A-Za-z_][A-Za-z0-9_]{0,63}, not "bad-name"`,
		`"plain"`:            "",
	} {
		p, err := env.Compile(src, expr.KindString)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if _, problem := p.Secrets(); problem != want {
			t.Errorf("%s: problem %q, want %q", src, problem, want)
		}
	}
}
