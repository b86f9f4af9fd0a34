package sdk

import (
	"context"
	"net/http"
)

// Moving a run to another version of its definition, and retrying a
// failed run on one (see docs/upgrades.md).

// UpgradeRun asks to move a run to another published version.
type UpgradeRun struct {
	Version int `json:"version"`
	// CancelRemoved allows removing steps whose nodes are running or
	// waiting: their work is withdrawn.
	CancelRemoved bool `json:"cancel_removed,omitempty"`
	// DryRun plans without changing anything.
	DryRun bool `json:"-"`
}

// RetryRun asks to retry a failed run from a failed (or cancelled) node,
// on Version (0: the run's own).
type RetryRun struct {
	Node          string `json:"node"`
	Version       int    `json:"version,omitempty"`
	CancelRemoved bool   `json:"cancel_removed,omitempty"`
	// DryRun answers the plan, whose Reruns say which nodes would run
	// again, without changing anything.
	DryRun bool `json:"-"`
}

// UpgradeResult is the plan of an upgrade or a retry on a version, and
// whether it was applied.
type UpgradeResult struct {
	RunID       string `json:"run_id"`
	FromVersion int    `json:"from_version"`
	ToVersion   int    `json:"to_version"`
	DryRun      bool   `json:"dry_run"`
	// Applied is false on a dry run and on a no-op.
	Applied bool        `json:"applied"`
	Noop    bool        `json:"noop"`
	Plan    UpgradePlan `json:"plan"`
	// Accepted is true when RetryRun moved the run and delivered the
	// retry.
	Accepted bool `json:"-"`
}

// UpgradePlan says, node by node, what an upgrade does. A refused
// upgrade is an [APIError] with status 422 whose Details hold the
// result, with the reasons in Plan.Refusals.
type UpgradePlan struct {
	Nodes        []PlanNode  `json:"nodes"`
	MissingReads []PlanIssue `json:"missing_reads"`
	Refusals     []PlanIssue `json:"refusals"`
	// Reruns are the nodes a retry runs again.
	Reruns []Rerun `json:"reruns"`
	// Reconsider are the pending steps whose predecessors have finished:
	// the upgrade starts (or skips) them at once.
	Reconsider []string    `json:"reconsider"`
	Summary    PlanSummary `json:"summary"`
}

// PlanNode is what an upgrade does to one node, matched by ref.
type PlanNode struct {
	Ref      string   `json:"ref"`
	Outcome  string   `json:"outcome"` // kept, changed, added, removed or cancelled
	State    string   `json:"state"`
	Effect   string   `json:"effect"`
	WouldRun string   `json:"would_run"` // yes (at once), no (skipped at once) or when_reached
	Changes  []string `json:"changes"`
}

// PlanIssue is an expression reading an output the run will not have,
// or a reason to refuse, by its path in the target version.
type PlanIssue struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Rerun is a node a retry runs again. FiresAgain flags a side-effecting
// step that already succeeded, with its last attempt.
type Rerun struct {
	Ref          string `json:"ref"`
	Type         string `json:"type"`
	State        string `json:"state"`
	FiresAgain   bool   `json:"fires_again"`
	LastAttempt  string `json:"last_attempt"`
	SideEffect   bool   `json:"side_effect"`
	NewInVersion bool   `json:"new_in_version"`
}

// PlanSummary counts the nodes of a plan by outcome.
type PlanSummary struct {
	Kept         int `json:"kept"`
	Changed      int `json:"changed"`
	Added        int `json:"added"`
	Removed      int `json:"removed"`
	Cancelled    int `json:"cancelled"`
	MissingReads int `json:"missing_reads"`
}

// UpgradeRun moves a run that has not ended to u.Version (with DryRun,
// only plans it). An ended run is an [APIError] with status 409, an
// unsafe upgrade one with status 422.
func (c *Client) UpgradeRun(ctx context.Context, runID string, u UpgradeRun) (UpgradeResult, error) {
	var out UpgradeResult
	_, err := c.do(ctx, http.MethodPost, runPath(runID)+"/upgrade"+dryRunQuery(u.DryRun), u, &out)
	return out, err
}

// RetryRun retries a failed run from r.Node on r.Version, planned like
// an upgrade; the result's Accepted says the retry was delivered.
func (c *Client) RetryRun(ctx context.Context, runID string, r RetryRun) (UpgradeResult, error) {
	var out struct {
		UpgradeResult
		Status  string         `json:"status"`
		Upgrade *UpgradeResult `json:"upgrade"`
	}
	status, err := c.do(ctx, http.MethodPost, runPath(runID)+"/retry"+dryRunQuery(r.DryRun), r, &out)
	res := out.UpgradeResult
	if out.Upgrade != nil {
		res = *out.Upgrade
	}
	res.Accepted = status == http.StatusAccepted
	return res, err
}

func dryRunQuery(dry bool) string {
	if dry {
		return "?dry_run=true"
	}
	return ""
}
