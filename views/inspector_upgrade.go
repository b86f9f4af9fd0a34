package views

import (
	"strings"

	"github.com/ductor/ductor/app/engine"
)

// isUpgrade reports whether a history entry is a run's upgrade to
// another version (app/runs, Upgrades): a run entry whose detail says
// "upgraded from vA to vB by WHO: SUMMARY".
func isUpgrade(t engine.Transition) bool {
	return t.Node == "" && t.From == t.To && strings.HasPrefix(t.Detail, "upgraded from v")
}
