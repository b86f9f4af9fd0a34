package pages_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ductor/ductor/app/engine"
	"github.com/ductor/ductor/app/runs"
	"github.com/ductor/ductor/app/store"
)

// "Retry failed children" on a scatter retries each of its failed
// children, as a retry of each would; viewers are not offered it, and a
// scatter with none failed refuses it.
func TestInspectorRetriesEveryFailedChild(t *testing.T) {
	t.Parallel()
	b := setupDashboard(t)
	b.publish(t, `
key: fails
steps:
  - ref: fan
    type: scatter
    with:
      items_expr: '[1, 2, 3]'
      do: {type: task, retry: {max_attempts: 1}, with: {handler: builtin.fail, input_expr: '{"message": "no"}'}}
  - {ref: all, type: gather, with: {scatter_ref: fan, strategy: raise}}
edges:
  - {from: fan, to: all}
`)
	id := b.start(t, runs.Trigger{Definition: "fails"})
	b.waitStatus(t, id, engine.RunFailed)
	path := "/runs/" + id.String()
	wantPage(t, "the scatter", b.get(b.owner, path+"?node=fan"), http.StatusOK, `id="retry-failed-children"`, "Retry 3 failed children")
	if a := b.get(b.viewer, path+"?node=fan"); a.Status != http.StatusOK || strings.Contains(a.Body, `id="retry-failed-children"`) {
		t.Error("the viewer is offered the retry of the failed children")
	}
	wantRedirect(t, "retry the failed children", b.post(b.owner, path+"/retry-children", url.Values{"node": {"fan"}}), "done=retry-children")
	b.waitRun(t, id, "every child retried once (and failed again)", func(store.Run) bool {
		kids, err := b.store.RunNodesChildrenFiltered(context.Background(), b.tenant.ID, id, store.ChildFilter{Scatter: "fan", After: -1, Limit: 10})
		if err != nil || len(kids) != 3 {
			return false
		}
		for _, k := range kids {
			if k.Retry != 1 || k.State != engine.NodeFailed {
				return false
			}
		}
		return true
	})
	b.waitStatus(t, id, engine.RunFailed)
	none := b.post(b.owner, path+"/retry-children", url.Values{"node": {"nothing"}})
	wantRedirect(t, "a scatter with no failed child", none, "done=retry-children-none")
}
