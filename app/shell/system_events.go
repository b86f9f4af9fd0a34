package shell

import (
	"context"

	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/sysevents"
)

// systemEvents stores, in the tick's transaction and in one statement,
// the system events the ticks' decisions report
// (sysevents.FromDecisions): a rolled-back tick leaves none, a committed
// one all of them, each queued for dispatch.
func (c *Writer) systemEvents(ctx context.Context, s *store.Store, ticks []*runTick) error {
	var out []store.SystemEvent
	for _, t := range ticks {
		r := t.load.Run
		evs := sysevents.FromDecisions(sysevents.Run{
			TenantID: r.TenantID, ID: r.ID, Definition: r.DefinitionKey, Version: r.DefinitionVersion,
			Subject: r.Subject, SearchAttributes: r.SearchAttributes, ParentRunID: r.ParentRunID,
		}, r.State.Status, t.state.Run, t.decisions)
		for _, e := range evs {
			out = append(out, store.SystemEvent{TenantID: r.TenantID, ID: e.ID, Name: e.Name, Data: e.Data})
		}
	}
	return s.SystemEventsAdd(ctx, out)
}
