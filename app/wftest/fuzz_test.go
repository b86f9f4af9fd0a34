package wftest

import "testing"

// A test file from anywhere never panics the parser or the compiler.
func FuzzParse(f *testing.F) {
	f.Add([]byte("definition: x.yaml\ntests: [{name: a}]\n"))
	f.Add([]byte("definition: {key: k, steps: []}\ntests: [{mocks: {a: [{output: 1}, {error: {code: e}}]}}]\n"))
	f.Add([]byte("{\"definition\": {}, \"tests\": [{\"deliver\": [{\"at\": \"1h\"}]}]}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		file, err := Parse(raw)
		if err != nil {
			return
		}
		if len(file.Definition) > 0 && file.Definition[0] == '{' { // not a path: the fuzzer reads no files
			if doc, err := file.DefinitionDoc(); err == nil {
				_, _ = Compile(doc)
			}
		}
	})
}
