package pages

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/store"
)

// The inspector's live view: a stream of server-sent events, one each
// time the run changes, that the page (js/inspector.js) answers by
// repainting the graph at once and refreshing its regions. The stream
// ends once the run has ended with no work for it still to come (an
// operator's retry is such work), and after a while in any case (the
// browser reconnects).
const (
	livePoll      = 400 * time.Millisecond
	liveKeepAlive = 15 * time.Second
	// DefaultLiveStreamFor is how long one stream lasts at most.
	DefaultLiveStreamFor = 5 * time.Minute
)

// LiveRun is what the inspector is told: the run's status and each step
// node's state.
type LiveRun struct {
	Status          string              `json:"status"`
	Final           bool                `json:"final"`
	TransitionCount int64               `json:"transition_count"`
	Nodes           map[string]liveNode `json:"nodes"`
}

type liveNode struct {
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	Waiting string `json:"waiting,omitempty"`
}

// handleInspectorLive answers the run's current status and node states.
func handleInspectorLive(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		out, err := loadLive(c.Request().Context(), s, httpx.ViewerOf(c).Tenant.ID, id)
		if err != nil {
			return err
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, out)
	}
}

func loadLive(ctx context.Context, s *store.Store, tenantID, id uuid.UUID) (LiveRun, error) {
	run, err := s.RunGet(ctx, tenantID, id)
	if err != nil {
		return LiveRun{}, err
	}
	nodes, err := s.RunNodesSteps(ctx, run.TenantID, run.ID)
	if err != nil {
		return LiveRun{}, err
	}
	out := LiveRun{Status: string(run.Status), Final: run.Status.Terminal(), TransitionCount: run.TransitionCount, Nodes: map[string]liveNode{}}
	for _, n := range nodes {
		ln := liveNode{State: string(n.State), Attempt: n.Attempt}
		if n.Waiting != nil {
			ln.Waiting = string(n.Waiting.Type)
		}
		out.Nodes[n.ID] = ln
	}
	return out, nil
}

// handleInspectorEvents streams the run's changes as server-sent events:
// "run" with the live state each time the run's record changes (the
// first at once), "end" when the run has ended and nothing is to come.
func handleInspectorEvents(s *store.Store, stopping <-chan struct{}, lifetime time.Duration) echo.HandlerFunc {
	if lifetime <= 0 {
		lifetime = DefaultLiveStreamFor
	}
	return func(c echo.Context) error {
		ctx, tenantID := c.Request().Context(), httpx.ViewerOf(c).Tenant.ID
		id, err := httpx.PathUUID(c, "id", "run")
		if err != nil {
			return err
		}
		if _, err := s.RunLiveState(ctx, tenantID, id); err != nil {
			return err
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/event-stream")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Accel-Buffering", "no")
		c.Response().WriteHeader(http.StatusOK)
		st := &liveStream{c: c, s: s, tenantID: tenantID, id: id, seen: -1}
		return st.run(ctx, stopping, lifetime)
	}
}

type liveStream struct {
	c        echo.Context
	s        *store.Store
	tenantID uuid.UUID
	id       uuid.UUID
	seen     int64 // the record version last sent
	quiet    time.Time
}

func (st *liveStream) run(ctx context.Context, stopping <-chan struct{}, lifetime time.Duration) error {
	poll := time.NewTicker(livePoll)
	defer poll.Stop()
	end := time.After(lifetime)
	st.quiet = time.Now()
	for {
		done, err := st.step(ctx)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-stopping:
			return nil
		case <-end:
			return nil
		case <-poll.C:
		}
	}
}

// step sends what changed; it reports true once the stream is over.
func (st *liveStream) step(ctx context.Context) (bool, error) {
	ls, err := st.s.RunLiveState(ctx, st.tenantID, st.id)
	if err != nil {
		return true, nil // the run is gone or the database is away: the browser retries
	}
	if ls.RecordVersion != st.seen {
		live, err := loadLive(ctx, st.s, st.tenantID, st.id)
		if err != nil {
			return true, nil
		}
		st.seen = ls.RecordVersion
		if err := st.send("run", live); err != nil {
			return true, nil
		}
	} else if time.Since(st.quiet) > liveKeepAlive {
		if _, err := fmt.Fprint(st.c.Response(), ": keep-alive\n\n"); err != nil {
			return true, nil
		}
		st.c.Response().Flush()
		st.quiet = time.Now()
	}
	if ls.Status.Terminal() && !ls.Pending {
		return true, st.send("end", map[string]string{"status": string(ls.Status)})
	}
	return false, nil
}

func (st *liveStream) send(event string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(st.c.Response(), "event: %s\ndata: %s\n\n", event, raw); err != nil {
		return err
	}
	st.c.Response().Flush()
	st.quiet = time.Now()
	return nil
}
