package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/schedule"
	"github.com/ductor/ductor/app/secrets"
	"github.com/ductor/ductor/app/store"
	"github.com/ductor/ductor/app/webhook"
)

// seedSchedule is a schedule of the seed file (a definition may also
// declare its own, in its triggers).
type seedSchedule struct {
	ID             string         `yaml:"id"`
	Definition     string         `yaml:"definition"`
	Spec           map[string]any `yaml:"spec"`
	Input          any            `yaml:"input"`
	Overlap        string         `yaml:"overlap"`
	CatchupWindow  string         `yaml:"catchup_window"`
	PauseOnFailure bool           `yaml:"pause_on_failure"`
	Paused         bool           `yaml:"paused"`
}

type seedWebhook struct {
	ID     string `yaml:"id"`
	Event  string `yaml:"event"`
	Scheme string `yaml:"scheme"`
}

// planSchedule checks a seed schedule and makes it a store.Schedule.
func planSchedule(s seedSchedule) (store.Schedule, error) {
	sc := store.Schedule{ID: s.ID, Definition: s.Definition, Input: s.Input, PauseOnFailure: s.PauseOnFailure, Paused: s.Paused,
		CatchupWindow: schedule.DefaultCatchupWindow}
	if !definition.IDPattern.MatchString(s.ID) || s.Definition == "" {
		return sc, fmt.Errorf("an id ([A-Za-z0-9][A-Za-z0-9._-]*) and a definition are required")
	}
	raw, _ := json.Marshal(s.Spec)
	if err := json.Unmarshal(raw, &sc.Spec); err != nil {
		return sc, fmt.Errorf("spec: %v", err)
	}
	if _, err := schedule.New(sc.Spec); err != nil {
		return sc, fmt.Errorf("spec.%v", err)
	}
	var err error
	if sc.Overlap, err = schedule.ParseOverlap(s.Overlap); err != nil {
		return sc, err
	}
	if s.CatchupWindow != "" {
		if sc.CatchupWindow, err = schedule.ParseDuration(s.CatchupWindow); err != nil || sc.CatchupWindow < time.Second {
			return sc, fmt.Errorf("catchup_window: want a duration of at least 1s, not %q", s.CatchupWindow)
		}
	}
	return sc, nil
}

func planWebhook(w seedWebhook) error {
	if !definition.IDPattern.MatchString(w.ID) || w.Event == "" {
		return fmt.Errorf("an id ([A-Za-z0-9][A-Za-z0-9._-]*) and an event are required")
	}
	_, err := webhook.ParseScheme(w.Scheme)
	return err
}

// applySchedules creates the schedules the tenant has none of by that id.
func (t plannedTenant) applySchedules(ctx context.Context, s *store.Store, tenant store.Tenant) ([]string, error) {
	var out []string
	for _, sc := range t.schedules {
		if _, err := s.ScheduleGet(ctx, tenant.ID, sc.ID); err == nil {
			out = append(out, fmt.Sprintf("schedule %s/%s exists", t.Slug, sc.ID))
			continue
		}
		if _, err := s.DefinitionVersionRef(ctx, tenant.ID, sc.Definition, 0); err != nil {
			return nil, fmt.Errorf("schedule %s: %w", sc.ID, err)
		}
		now, err := s.Now(ctx)
		if err != nil {
			return nil, err
		}
		plan, _ := sc.Compiled() // checked when planned
		sc.TenantID = tenant.ID
		sc.PlanFrom(plan, now)
		if _, err := s.ScheduleCreate(ctx, sc); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("schedule %s/%s created", t.Slug, sc.ID))
	}
	return out, nil
}

// applyWebhooks creates the webhooks the tenant has none of by that id and
// prints their secrets, shown this once.
func (t plannedTenant) applyWebhooks(ctx context.Context, s *store.Store, tenant store.Tenant, box *secrets.Box) ([]string, error) {
	var out []string
	for _, w := range t.Webhooks {
		if _, err := s.WebhookGet(ctx, tenant.ID, w.ID); !apperr.Is(err, apperr.NotFound) {
			out = append(out, fmt.Sprintf("webhook %s/%s exists (its secret was shown when it was created)", t.Slug, w.ID))
			continue
		}
		if box == nil {
			return nil, fmt.Errorf("webhook %s: webhooks need DUCTOR_SECRET_KEY, which seals their secrets", w.ID)
		}
		scheme, _ := webhook.ParseScheme(w.Scheme)
		secret := webhook.NewSecret()
		_, err := s.WebhookCreate(ctx, store.Webhook{TenantID: tenant.ID, ID: w.ID, Event: w.Event, Scheme: string(scheme),
			Secret: box.Seal([]byte(secret), store.WebhookAAD(tenant.ID, w.ID)), SecretHint: webhook.Hint(secret)})
		if err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("webhook %s/%s /hooks/%s/%s %s", t.Slug, w.ID, t.Slug, w.ID, secret))
	}
	return out, nil
}
