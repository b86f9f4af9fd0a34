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

func TestKeyringReseals(t *testing.T) {
	t.Parallel()
	oldKey, newKey := strings.Repeat("o", 32), strings.Repeat("n", 32)
	old, _ := NewBox(oldKey)
	sealed := old.Seal([]byte("sk_live"), "aad")

	ring, err := NewKeyring(newKey, oldKey)
	if err != nil || !ring.HasPrevious() {
		t.Fatalf("keyring: %v", err)
	}
	if plain, err := ring.Open(sealed, "aad"); err != nil || string(plain) != "sk_live" {
		t.Fatalf("a value sealed under the previous key: %q, %v", plain, err)
	}
	resealed, changed, err := ring.Reseal(sealed, "aad")
	if err != nil || !changed {
		t.Fatalf("reseal = %v, %v", changed, err)
	}
	if _, again, _ := ring.Reseal(resealed, "aad"); again {
		t.Errorf("a value under the current key was re-sealed again")
	}
	current, _ := NewBox(newKey)
	if plain, err := current.Open(resealed, "aad"); err != nil || string(plain) != "sk_live" {
		t.Errorf("the re-sealed value does not open without the previous key: %q, %v", plain, err)
	}
	if _, err := current.Open(sealed, "aad"); !errors.Is(err, ErrOpen) {
		t.Errorf("the old value opened without the previous key")
	}
	if _, err := NewKeyring(newKey, newKey); err == nil {
		t.Errorf("the same key twice was accepted")
	}
	if _, err := NewKeyring(newKey, "short"); err == nil {
		t.Errorf("a short previous key was accepted")
	}
}
