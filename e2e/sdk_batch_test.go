package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ductor/ductor/sdk"
)

// CancelRuns and RetryRuns start bulk operations, by filter or by run id,
// that the server works in the background; WaitBatch follows one to its
// end, and runs it could not act on are counted with why.
func TestSDKBulkOperations(t *testing.T) {
	t.Parallel()
	url, key := startSDKServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := sdkClient(t, url, key)
	for _, d := range []*sdk.Definition{
		{Key: "gate", Steps: []sdk.Step{sdk.SignalStep("go", sdk.SignalWith{Name: "go"})}},
		{Key: "fail", Steps: []sdk.Step{sdk.TaskStep("boom", sdk.TaskWith{Handler: "builtin.fail"})}},
	} {
		if _, err := c.Publish(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var gates []string
	for _, region := range []string{"eu", "eu", "us"} {
		s, err := c.StartRun(ctx, sdk.StartRun{Definition: "gate", SearchAttributes: map[string]any{"region": region}})
		if err != nil {
			t.Fatal(err)
		}
		gates = append(gates, s.ID)
		sdkWaitRun(t, ctx, c, s.ID, sdkIsStatus("waiting"))
	}
	if _, err := c.CancelRuns(ctx, sdk.BatchRuns{}); err == nil {
		t.Error("a bulk cancel of no filter and no runs was sent")
	}
	b, err := c.CancelRuns(ctx, sdk.BatchRuns{Filter: &sdk.RunQuery{Definition: "gate", Attributes: map[string]any{"region": "eu"}}, Reason: "region closed"})
	if err != nil || b.ID == "" || b.Action != "cancel" || b.Total != 2 {
		t.Fatalf("CancelRuns = %+v, %v", b, err)
	}
	if b, err = c.WaitBatch(ctx, b.ID, 20*time.Millisecond); err != nil || !b.Finished() || b.Done != 2 || b.Failed != 0 || b.Reason != "region closed" {
		t.Fatalf("WaitBatch = %+v, %v; want both runs cancelled", b, err)
	}
	sdkWaitRun(t, ctx, c, gates[0], sdkIsStatus("cancelled"))
	if r, err := c.GetRun(ctx, gates[2]); err != nil || r.Status != "waiting" {
		t.Errorf("the us run = %+v, %v; want it left waiting", r, err)
	}

	failed, err := c.StartRun(ctx, sdk.StartRun{Definition: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	sdkWaitRun(t, ctx, c, failed.ID, sdkIsStatus("failed"))
	b, err = c.RetryRuns(ctx, sdk.BatchRuns{RunIDs: []string{failed.ID, gates[2]}})
	if err != nil {
		t.Fatal(err)
	}
	if b, err = c.WaitBatch(ctx, b.ID, 20*time.Millisecond); err != nil || b.Done != 1 || b.Failed != 1 || len(b.Errors) != 1 || b.Errors[0].RunID != gates[2] {
		t.Fatalf("WaitBatch = %+v, %v; want the failed run retried and the waiting one refused", b, err)
	}
	sdkWaitRun(t, ctx, c, failed.ID, func(r *sdk.Run) bool { return r.Nodes[0].Generation == 1 && r.Terminal() })
	if got, err := c.GetBatch(ctx, b.ID); err != nil || got.ID != b.ID || got.Action != "retry" || got.CreatedAt.IsZero() || got.FinishedAt == nil {
		t.Errorf("GetBatch = %+v, %v", got, err)
	}
	var ended *sdk.APIError
	if got, err := c.StopBatch(ctx, b.ID); !errors.As(err, &ended) || ended.Status != http.StatusConflict || ended.Code != "conflict" {
		t.Errorf("StopBatch of a finished batch = %+v, %v; want a 409 conflict", got, err)
	}
}
