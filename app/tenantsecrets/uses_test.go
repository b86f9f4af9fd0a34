package tenantsecrets_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/tenantsecrets"
	"github.com/ductor/ductor/app/testdb"
)

// Uses names the published versions whose steps reference each secret,
// and not those that merely mention its name, nor another tenant's, nor
// an unpublished one.
func TestUses(t *testing.T) {
	ctx := context.Background()
	st := store.New(testdb.Tx(t))
	a, b := testdb.Tenant(t, st, nil), testdb.Tenant(t, st, nil)
	svc := tenantsecrets.New(tenantsecrets.Config{Store: st, Box: box(t, newKey, "")})

	const chat = "key: chat\nsteps:\n  - {ref: send, type: http, with: {url: \"https://chat.example/\", auth: {bearer: CHAT_TOKEN}}}\n"
	testdb.Definition(t, st, a.ID, chat)
	testdb.Definition(t, st, a.ID, chat+"name: chat two\n")
	testdb.Definition(t, st, a.ID, "key: billing\nsteps:\n  - {ref: charge, type: task, with: {handler: charge, secrets: [STRIPE_KEY, CHAT_TOKEN]}}\n")
	testdb.Definition(t, st, a.ID, "key: mentions\nname: CHAT_TOKEN\nsteps:\n  - {ref: t, type: transform, with: {expr: '\"STRIPE_KEY\"'}}\n")
	gone := testdb.Definition(t, st, a.ID, "key: gone\nsteps:\n  - {ref: s, type: http, with: {url: \"https://x.example/\", headers_expr: '{\"K\": secret(\"STRIPE_KEY\")}'}}\n")
	if _, _, err := st.DefinitionVersionUnpublish(ctx, a.ID, gone.Key, gone.Version, "cli"); err != nil {
		t.Fatal(err)
	}
	testdb.Definition(t, st, b.ID, "key: other\nsteps:\n  - {ref: s, type: http, with: {url: \"https://x.example/\", auth: {bearer: STRIPE_KEY}}}\n")

	got, err := svc.Uses(ctx, a.ID, []string{"CHAT_TOKEN", "STRIPE_KEY", "UNUSED"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]tenantsecrets.Use{
		"CHAT_TOKEN": {{Key: "billing", Version: 1}, {Key: "chat", Version: 2}, {Key: "chat", Version: 1}},
		"STRIPE_KEY": {{Key: "billing", Version: 1}},
		"UNUSED":     {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("uses = %v\nwant %v", got, want)
	}
}
