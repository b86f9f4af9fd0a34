package db_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/ductor/ductor/db"
)

// landed pins every migration that has landed on main by the sha256 of its
// file. Installed databases have run these files as they are: editing one
// changes nothing on them and leaves new installations with a different
// schema, so a landed file is never edited and never renumbered. A change
// to the schema is a new file numbered above the highest one here; once it
// has landed, add its line below.
//
// 0003, 0013, 0023 and 0035 were edited after they landed, before this
// table existed; they are pinned as they are now.
var landed = map[string]string{
	"0001_tenants":                "80f6a74f90c53d30020cfbf1594efd6c10ea1c15c81c6bfd9ea59d83c74555ed",
	"0002_definitions":            "0e49f120099f35210477d6c1bddee770ed0f2678613a832d4b51d6b6e5e5fa8c",
	"0003_runs":                   "908670d63c96cfa826bb6ce18aa02a6e53bef5be2aa35f73f2165c920ae24f5a",
	"0004_identity":               "7e32316475feacdf37cc6e47198430bce7144f385ff02dbfe979d0ee04723a57",
	"0005_definitions_more":       "cf433b66bd186d3d3d1f330819c0dcd13f9815ce8805709652437da2dcd2b6c7",
	"0006_waiting":                "f45b3095c8cfa57577b1c86fd76fab522add7da4a982b75392f5bc7f74ccc58e",
	"0007_fair_queue":             "f4512af8da6cce44a8133b9eef2a7228fdca5eb98880c362be1dd33d0a5886d5",
	"0008_tenant_limits":          "d96948c5a504257176584e147737c3aea2cf2ec8ed176a504a343773f5e2f823",
	"0009_bridge_task":            "6ddbd5867a63b9fbdae4439532bbf24909a7dba9a37b3c69eb7510d0546ca179",
	"0010_run_input_column":       "4a53d704aca693eb6203daca6d416fba876bdc5bd576f10b58eafb457cc7a071",
	"0011_run_node_steps_index":   "5cfbca31f990d144d7cc4836536bb19e0b8b49aff05f349f8629eb4fe9ab3501",
	"0012_river_gin_pending_list": "86ae1fe8ff448809c96e1cb4be96d0a26a78b532a2094a2cf94834d8805465ce",
	"0013_exactly_once":           "6299b5929f13cbb74511c66ceb56c010454f1609bccd4c80955e1e66799c55a3",
	"0015_schedule_to_start":      "fe3455bc1cbd0800d3780526de1c1aebd8eb179f6786030e49a499f786ca6380",
	"0017_api_key_tag":            "2b174f794a1655480bbb1fc5d1b345462f9764a0a7552335fdf48aa0e9244ac8",
	"0019_schedules":              "94b6299a5dbb3ebb29313918acd99a6494ba6fd513cb6015f18a18ff9b9fdae0",
	"0020_webhooks":               "803a1ae9f05b7b0111d2c75bbdfc432eeb5242c3389482f1768a8bda07e920d4",
	"0021_event_triggers":         "3fec8db830f6733997348fe2ac46d294dbee09bb0398f752f715dd565b3d6f67",
	"0023_retention":              "5d60d7e8cb3acb516bef40d54632d7089d40bd8108f760904eca9ab3fd666a83",
	"0024_attempt_worker":         "1df3c8814b3b7bfc004093099d5b6e914119b3b53dec2d4a98daceece6f2fc51",
	"0028_run_batches":            "192094005ecfb864751682d937e4dadb28ad7ab5272a297e56d02259cfac40dc",
	"0029_run_estimate":           "71fd66d5d0465d46ca3b311a998638da9f2edc3f43bcee1e784e542aad9e335c",
	"0030_flow_control":           "f6d0203e4649ae2b72dd558d053f9db3033a3ed351595ad60280939b727826fb",
	"0033_hot_updates":            "8e2795d397d749a903eecc33437911c6ab620968efe5dfd81f1f29a46937823f",
	"0034_history_batches":        "c74304bf85d3f0314c070acbacc7f06d4bd8c7fa7c3f4a3e82731dc647eeb471",
	"0035_step_job_lookup":        "d2d108aa6640a1aad64f654b707e3734884cbe93165575ad34dec2464356080b",
	"0036_schedule_action_error":  "e18a953d0b2e3758c9869750500ad76f0428a674c1cf9130b7851e39c6269d75",
	"0037_step_worker":            "3740341d29c6638306c3d8d63529f91d0331ee7244110832766a262989361280",
	"0039_pool_waits":             "f44cafcbd96e5c561836f774a63b71693397d24ac6296e69ef44a7403d96f932",
	"0040_principals":             "5a733fd9e22301e2b219fdad2a6d875f3c9097c3ba71c035b3024e2884b8b360",
	"0041_batch_fair":             "2dacc969833fdb14a8742ca4a40874e041bfdf8d73857d7d999116ea7a75f2f1",
	"0042_tenant_secrets":         "f9486bba5e61b9158df744c826a624f8e9c8266d868d8fe05720417ea424b9ce",
	"0043_system_events":          "bdf02729e2d5ae17fc68b177fcd1c8ae4863df0d8e5fd7cbfe6cbd57275f0a8d",
	"0044_batch_upgrade":          "712e9a301c9117659ef79aaf19528ec900563be44db4764e3108858216e6425c",
	"0045_usage":                  "4caddde039fdef05e042c0420bb70d580ba7af54af30759d6b44f753493865d0",
	"0046_webhook_refusals":       "e40ae93f121ea82a3e62e6ae149f340a56d275dd9a9f30d202ae4cc832d859ca", "0047_usage_stored_history": "c6902acf43635b878352eed0591770dfafba745ccf2882c3ca925cf01164624f",
	"0048_tiers":                        "e5982267d1c7c7f1b04e803b814a436a1aef0d8525705f3e460b57cbac6cd74a",
	"0049_usage_stored_by_definition":   "50629e6350bfe8b1c1ee1ceedd1c290cae25891910ce4bb5352759febea38c72",
	"0050_attempt_input":                "802e154ec7f2d70a3ac55aca7d7efd64dd9f764cfe5e53742cba327e502e1f1b",
	"0051_webhook_deliveries":           "e6ecaf2c8c9cda79b0307d5d3d236b01c0046d08290f837d46524182a43f3c6c",
	"0052_usage_attempt_input":          "c3ab5df59a81e6e35b603443527b34b77a3a38df835ffae5454109885fc67399",
	"0053_usage_run_status_row_trigger": "66da0aac56aec88fcab975082959636a3fedb2f7fe0062f97c27c330a7f1f049",
	"0054_usage_steps_by_type":          "f6de482e45737a262c15d1a14d103aa7919a5270d1cbd312e8ff1b15e5830a41",
	"0055_usage_definition_on_rows":     "4dfcbbb8145d5439a9de81a809de5a4b692333d97e1a118783a0b863226119d2",
}

func TestLandedMigrationsAreUnchanged(t *testing.T) {
	t.Parallel()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, m := range ms {
		present[m.Name] = true
		want, ok := landed[m.Name]
		if !ok {
			continue
		}
		sum := sha256.Sum256([]byte(m.SQL))
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("migration %s.sql has changed since it landed (sha256 %s, pinned %s). "+
				"Installed databases have already run it as it was: never edit a landed migration; "+
				"restore it and put the change in a new file numbered above %04d.", m.Name, got, want, highestLanded(t))
		}
	}
	for name := range landed {
		if !present[name] {
			t.Errorf("landed migration %s.sql is missing. Installed databases have run it: "+
				"never delete or renumber a landed migration; restore it.", name)
		}
	}
}

func TestNewMigrationsAreNumberedAboveTheLandedOnes(t *testing.T) {
	t.Parallel()
	ms, err := db.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	top := highestLanded(t)
	seen := map[int]string{}
	for _, m := range ms {
		if other, ok := seen[m.Version]; ok {
			t.Errorf("migrations %s.sql and %s.sql share the number %04d: "+
				"give the new one a number above %04d, unused by any other file.", other, m.Name, m.Version, top)
		}
		seen[m.Version] = m.Name
		if _, ok := landed[m.Name]; !ok && m.Version <= top {
			t.Errorf("new migration %s.sql is numbered %04d, at or below the highest landed one (%04d). "+
				"Installed databases would run it after migrations numbered above it, an order "+
				"new installations never see: renumber it above %04d (the gaps below stay unused).",
				m.Name, m.Version, top, top)
		}
	}
}

// highestLanded is the number of the highest pinned migration.
func highestLanded(t *testing.T) int {
	t.Helper()
	top := 0
	for name := range landed {
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("landed migration %q does not start with a number", name)
		}
		top = max(top, v)
	}
	return top
}
