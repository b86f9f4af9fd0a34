package definition_test

import (
	"fmt"

	"github.com/ductor/ductor/app/definition"
)

func ExampleCompile() {
	doc := []byte(`
key: greet
steps:
  - { ref: hello, type: task, with: { handler: builtin.echo } }
  - { ref: pause, type: wait, with: { duration: PT90S } }
edges:
  - { from: hello, to: pause }
`)
	c, err := definition.Compile(doc, definition.FormatYAML)
	if err != nil {
		fmt.Println(err)
		return
	}
	pause, _ := c.Manifest.Step("pause")
	fmt.Println(c.Manifest.Order, pause.With["duration_ms"], len(c.Hash))
	// Output: [hello pause] 90000 64
}

func ExampleInvalidError() {
	_, err := definition.Compile([]byte(`{"key": "k", "steps": [{"ref": "nap", "type": "sleep"}, {"ref": "Bad"}]}`), definition.FormatJSON)
	if inv, ok := err.(*definition.InvalidError); ok {
		for _, p := range inv.Problems {
			fmt.Printf("%s (%s): %s\n", p.Path, p.Step, p.Message)
		}
	}
	// Output:
	// steps[0].type (nap): unknown step type "sleep": did you mean "wait"?
	// steps[1].ref (Bad): must match [a-z][a-z0-9_]{0,62}, not "Bad"
	// steps[1].type (Bad): is required
}

func ExampleDefinition() {
	d := definition.Definition{
		Key: "charge",
		Steps: []definition.StepDef{
			definition.Condition("check", "input.amount > 0"),
			definition.Task("charge", "payments.charge").WithRetry(definition.RetryDef{MaxAttempts: 5}),
			definition.Task("reject", "builtin.noop"),
		},
		Edges: []definition.EdgeDef{
			definition.On("check", "charge", definition.OutcomeTrue),
			definition.On("check", "reject", definition.OutcomeFalse),
		},
	}
	c, err := definition.NewCompiler(definition.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	compiled, err := c.CompileDefinition(&d)
	if err != nil {
		fmt.Println(err)
		return
	}
	charge, _ := compiled.Manifest.Step("charge")
	fmt.Println(compiled.Manifest.Entrypoints, charge.Retry.MaxAttempts, charge.TimeoutMS)
	// Output: [check] 5 60000
}
