package secrets

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealOpens(t *testing.T) {
	t.Parallel()
	b, err := NewBox(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	sealed := b.Seal([]byte("whsec_abc"), "tenant/hook")
	if bytes.Contains(sealed, []byte("whsec_abc")) {
		t.Fatal("the sealed value shows the secret")
	}
	plain, err := b.Open(sealed, "tenant/hook")
	if err != nil || string(plain) != "whsec_abc" {
		t.Fatalf("open = %q, %v", plain, err)
	}
	if _, err := b.Open(sealed, "tenant/other"); !errors.Is(err, ErrOpen) {
		t.Errorf("opened with another row's data: %v", err)
	}
	other, _ := NewBox(strings.Repeat("x", 32))
	if _, err := other.Open(sealed, "tenant/hook"); !errors.Is(err, ErrOpen) {
		t.Errorf("opened under another key: %v", err)
	}
	if _, err := b.Open(sealed[:5], "tenant/hook"); !errors.Is(err, ErrOpen) {
		t.Errorf("opened a truncated value: %v", err)
	}
	if _, err := NewBox("short"); err == nil {
		t.Errorf("a short key was accepted")
	}
}
