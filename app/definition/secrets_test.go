package definition

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestSecretReferences(t *testing.T) {
	t.Parallel()
	const u = `url: "https://api.example.com/x"`
	runRules(t, []ruleCase{
		{"bearer", one(`{ref: a, type: http, with: {` + u + `, auth: {bearer: API_TOKEN}}}`), nil},
		{"basic", one(`{ref: a, type: http, with: {` + u + `, auth: {basic: {user: bot, password: API_PASSWORD}}}}`), nil},
		{"in url_expr, headers_expr and body_expr", one(`{ref: a, type: http, with: {url_expr: '"https://x.example/?k=" + secret("K")', headers_expr: '{"X-Api-Key": secret("K")}', body_expr: '{"token": secret("T")}'}}`), nil},
		{"task secrets", one(`{ref: a, type: task, with: {handler: h, queue: q, secrets: [A, B_2]}}`), nil},
		{"both schemes", one(`{ref: a, type: http, with: {` + u + `, auth: {bearer: A, basic: {user: u, password: B}}}}`),
			[]want{{"steps[0].with.auth.basic", "a", "only one of"}}},
		{"bad bearer name", one(`{ref: a, type: http, with: {` + u + `, auth: {bearer: "my-token"}}}`),
			[]want{{"steps[0].with.auth.bearer", "a", "must be a secret's name"}}},
		{"basic without password", one(`{ref: a, type: http, with: {` + u + `, auth: {basic: {user: u}}}}`),
			[]want{{"steps[0].with.auth.basic.password", "a", "is required"}}},
		{"secret in a transform", one(`{ref: a, type: transform, with: {expr: 'secret("K")'}}`),
			[]want{{"steps[0].with.expr", "a", "secret() is only valid in an http step's url_expr, headers_expr and body_expr"}}},
		{"secret in a task input", one(`{ref: a, type: task, with: {handler: h, input_expr: '{"k": secret("K")}'}}`),
			[]want{{"steps[0].with.input_expr", "a", "secret() is only valid"}}},
		{"secret in a condition", one(`{ref: a, type: condition, with: {expr: 'secret("K") == "x"'}}`),
			[]want{{"steps[0].with.expr", "a", "secret() is only valid"}}},
		{"secret in the output", one(taskA) + "output_expr: 'secret(\"K\")'\n",
			[]want{{"output_expr", "", "secret() is only valid"}}},
		{"computed name", one(`{ref: a, type: http, with: {url_expr: '"https://x.example/" + secret(input.name)'}}`),
			[]want{{"steps[0].with.url_expr", "a", `secret() takes a literal name`}}},
		{"bad name", one(`{ref: a, type: http, with: {` + u + `, body_expr: 'secret("no-dash")'}}`),
			[]want{{"steps[0].with.body_expr", "a", `must match`}}},
		{"headers and headers_expr", one(`{ref: a, type: http, with: {` + u + `, headers: {A: b}, headers_expr: '{"A": "b"}'}}`),
			[]want{{"steps[0].with.headers_expr", "a", "only one of"}}},
		{"bad task secret", one(`{ref: a, type: task, with: {handler: h, secrets: [ok, "not ok"]}}`),
			[]want{{"steps[0].with.secrets[1]", "a", "must be a secret's name"}}},
		{"task secret twice", one(`{ref: a, type: task, with: {handler: h, secrets: [A, A]}}`),
			[]want{{"steps[0].with.secrets[1]", "a", "twice"}}},
	})
}

// SecretNames lists every secret a manifest references, from each place
// one may be named, the same before and after a JSON round trip.
func TestManifestSecretNames(t *testing.T) {
	t.Parallel()
	c := mustCompile(t, `key: k
steps:
  - {ref: a, type: http, with: {url_expr: '"https://x.example/?k=" + secret("URL_KEY")', headers_expr: '{"X-Api-Key": secret("HEADER_KEY")}', body_expr: '{"t": secret("BODY_KEY"), "u": secret("URL_KEY")}'}}
  - {ref: b, type: http, with: {url: "https://x.example/", auth: {bearer: BEARER}}}
  - {ref: c, type: http, with: {url: "https://x.example/", auth: {basic: {user: bot, password: BASIC_PW}}}}
  - {ref: d, type: task, with: {handler: h, secrets: [TASK_A, TASK_B]}}
  - {ref: e, type: scatter, with: {items_expr: '[1, 2]', do: {type: http, with: {url: "https://x.example/", auth: {bearer: SCATTER}}}}}
  - {ref: f, type: transform, with: {expr: '"secret(\"NOT_ONE\")"'}}
`)
	want := []string{"BASIC_PW", "BEARER", "BODY_KEY", "HEADER_KEY", "SCATTER", "TASK_A", "TASK_B", "URL_KEY"}
	if got := c.Manifest.SecretNames(); !slices.Equal(got, want) {
		t.Errorf("compiled: %v, want %v", got, want)
	}
	var back Manifest
	if err := json.Unmarshal(c.JSON, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.SecretNames(); !slices.Equal(got, want) {
		t.Errorf("read back: %v, want %v", got, want)
	}
	if got := mustCompile(t, one(taskA)).Manifest.SecretNames(); len(got) != 0 {
		t.Errorf("a definition without secrets: %v", got)
	}
}
