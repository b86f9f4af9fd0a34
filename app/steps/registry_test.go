package steps_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ductor/ductor/app/steps"
)

func TestRegistryBuiltinsPresent(t *testing.T) {
	t.Parallel()
	reg := steps.NewRegistry()
	for _, name := range []string{steps.BuiltinNoop, steps.BuiltinEcho, steps.BuiltinSleep, steps.BuiltinFail} {
		if _, ok := reg.Lookup(name); !ok {
			t.Errorf("Lookup(%q): not registered", name)
		}
	}
	if _, ok := reg.Lookup("billing.charge"); ok {
		t.Error(`Lookup("billing.charge") = ok, want not found`)
	}
}

func TestRegistryRegister(t *testing.T) {
	t.Parallel()
	reg := steps.NewRegistry()
	h := func(context.Context, steps.Call) (any, error) { return "charged", nil }
	if err := reg.Register("billing.charge", h); err != nil {
		t.Fatalf("Register: %v", err)
	}
	got, ok := reg.Lookup("billing.charge")
	if !ok {
		t.Fatal("Lookup after Register: not found")
	}
	if out, _ := got(t.Context(), steps.Call{}); out != "charged" {
		t.Errorf("looked-up handler returned %v", out)
	}
}

func TestRegistryRegisterRefusesDuplicates(t *testing.T) {
	t.Parallel()
	reg := steps.NewRegistry()
	h := func(context.Context, steps.Call) (any, error) { return nil, nil }
	if err := reg.Register("a", h); err != nil {
		t.Fatalf("first Register: %v", err)
	}
	for _, name := range []string{"a", steps.BuiltinEcho} {
		if err := reg.Register(name, h); !errors.Is(err, steps.ErrDuplicateHandler) {
			t.Errorf("Register(%q) again = %v, want ErrDuplicateHandler", name, err)
		}
	}
}

func TestRegistryRegisterRefusesEmpty(t *testing.T) {
	t.Parallel()
	reg := steps.NewRegistry()
	if err := reg.Register("", func(context.Context, steps.Call) (any, error) { return nil, nil }); err == nil {
		t.Error("Register with an empty name succeeded")
	}
	if err := reg.Register("x", nil); err == nil {
		t.Error("Register with a nil handler succeeded")
	}
}
