package steps_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/steps"
)

func TestOutputsThatCannotBeStoredAreInvalid(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.register(t, "nul", func(context.Context, steps.Call) (any, error) {
		return map[string]any{"name": "a\x00b"}, nil
	})
	b.register(t, "nan", func(context.Context, steps.Call) (any, error) { return math.NaN(), nil })
	_, err := b.run(t, task("nul", nil))
	wantError(t, err, steps.CodeInvalidOutput, false, "NUL character (\\u0000) at .name")
	_, err = b.run(t, task("nan", nil))
	wantError(t, err, steps.CodeInvalidOutput, false, "NaN")
}

func TestHTTPBodyNumbersKeepTheirKind(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": 9007199254740993, "price": 2.0, "text": "x\u0000"}`))
	}))
	defer srv.Close()
	b := setup(t, loopbackAllowed)
	_, err := b.run(t, httpReq(map[string]any{"url": srv.URL, "method": "GET"}))
	wantError(t, err, steps.CodeInvalidOutput, false, "at .body.text")
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id": 9007199254740993, "price": 2.0}`))
	}))
	defer srv2.Close()
	out, err := b.run(t, httpReq(map[string]any{"url": srv2.URL, "method": "GET"}))
	if err != nil {
		t.Fatal(*err)
	}
	body := outputMap(t, out)["body"].(map[string]any)
	if body["id"] != int64(9007199254740993) || body["price"] != 2.0 {
		t.Fatalf("body = %#v, want the id exact and the price a double", body)
	}
}

func TestBuiltinHandlersMatchTheCompilersList(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, name := range definition.BuiltinHandlers {
		if !b.exec.Handles(name) {
			t.Errorf("the compiler accepts %s, which the registry lacks", name)
		}
	}
	names := []string{steps.BuiltinNoop, steps.BuiltinEcho, steps.BuiltinSleep, steps.BuiltinFail}
	slices.Sort(names)
	if !slices.Equal(names, definition.BuiltinHandlers) {
		t.Errorf("built-in handlers %v, compiler's list %v", names, definition.BuiltinHandlers)
	}
}
