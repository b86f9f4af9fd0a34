package pages_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// The editor's pickers get the built-in handlers and those the
// tenant's published definitions name (steps and scatter templates), the
// tenant's members and roles, and its definitions with their published
// versions; a viewer, who cannot edit, gets none of it.
func TestEditorHints(t *testing.T) {
	t.Parallel()
	f := setupTwoTenants(t)
	doc := `key: shop
steps:
  - {ref: pay, type: task, with: {handler: pay.charge}}
  - {ref: each, type: scatter, with: {items_expr: "[1]", do: {type: task, with: {handler: ship.label}}}}
edges:
  - {from: pay, to: each}
`
	c, err := definition.Compile([]byte(doc), definition.FormatYAML)
	if err != nil {
		t.Fatal(err)
	}
	pub := store.Publication{Manifest: c.Manifest, ManifestHash: c.Hash, Source: doc, SourceFormat: "yaml"}
	if _, _, err := f.Store.DefinitionPublish(context.Background(), f.a.ID, pub); err != nil {
		t.Fatal(err)
	}
	path := "/t/" + f.a.Slug + "/definitions/orders/hints"
	a := f.request(f.alice, "GET", path, nil, asJSON)
	if a.Status != http.StatusOK {
		t.Fatalf("hints = %d %s", a.Status, a.Body)
	}
	h := decode[struct {
		Handlers []string `json:"handlers"`
		Members  []struct {
			Email string `json:"email"`
		} `json:"members"`
		Roles       []string                   `json:"roles"`
		Definitions []store.DefinitionVersions `json:"definitions"`
	}](t, a)
	for _, want := range []string{"builtin.echo", "builtin.noop", "pay.charge", "ship.label"} {
		if !slices.Contains(h.Handlers, want) {
			t.Errorf("handlers %v lack %s", h.Handlers, want)
		}
	}
	if h.Handlers[0] != definition.BuiltinHandlers[0] {
		t.Errorf("handlers %v do not start with the built-in ones", h.Handlers)
	}
	var emails []string
	for _, m := range h.Members {
		emails = append(emails, m.Email)
	}
	if !slices.Contains(emails, walt) || !slices.Contains(emails, victor) || slices.Contains(emails, bert) {
		t.Errorf("members %v", emails)
	}
	if !slices.Contains(h.Roles, "role:admin") || !slices.Contains(h.Roles, "role:approver") {
		t.Errorf("roles %v", h.Roles)
	}
	found := map[string][]int{}
	for _, d := range h.Definitions {
		found[d.Key] = d.Versions
	}
	if !slices.Equal(found["shop"], []int{1}) || !slices.Equal(found["orders"], []int{1}) {
		t.Errorf("definitions %+v", h.Definitions)
	}

	if a := f.request(f.victor, "GET", path, nil, asJSON); a.Status != http.StatusForbidden {
		t.Errorf("a viewer's hints = %d, want 403", a.Status)
	}
}
