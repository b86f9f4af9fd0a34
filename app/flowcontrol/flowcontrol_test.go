package flowcontrol

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/expr"
)

func TestKeyText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    any
		want string
		bad  string
	}{
		{v: "user-1", want: "user-1"},
		{v: int64(42), want: "42"},
		{v: true, want: "true"},
		{v: "", want: ""},
		{v: 1.5, bad: "not a double"},
		{v: nil, bad: "not null"},
		{v: []any{"a"}, bad: "not a list"},
		{v: strings.Repeat("k", MaxKeyBytes+1), bad: "at most 256 bytes"},
	} {
		got, err := KeyText(tt.v)
		switch {
		case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad) || !errors.Is(err, ErrKey)):
			t.Errorf("KeyText(%v) err = %v, want %q", tt.v, err, tt.bad)
		case tt.bad == "" && (err != nil || got != tt.want):
			t.Errorf("KeyText(%v) = %q, %v, want %q", tt.v, got, err, tt.want)
		}
	}
	if _, err := LimitOf(int64(0)); err == nil {
		t.Error("a limit of 0 is accepted")
	}
	if n, err := LimitOf(int64(3)); n != 3 || err != nil {
		t.Errorf("LimitOf(3) = %d, %v", n, err)
	}
}

func TestPools(t *testing.T) {
	t.Parallel()
	a := Pool(KindConcurrency, "orders", "input.user")
	if a != Pool(KindConcurrency, "orders", "input.user") {
		t.Error("a pool is not stable")
	}
	for _, other := range []string{Pool(KindThrottle, "orders", "input.user"), Pool(KindConcurrency, "invoices", "input.user"), Pool(KindConcurrency, "orders", "input.org")} {
		if other == a {
			t.Errorf("pools collide: %s", a)
		}
	}
}

func TestNextStartKeepsLimitStartsPerWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := Window{Limit: 2, Period: 10 * time.Second}
	var starts []time.Time // newest first
	for i := range 7 {
		now := t0.Add(time.Duration(i) * time.Second) // seven starts a second apart
		at := NextStart(now, starts, w)
		starts = append([]time.Time{at}, starts...)
	}
	want := []time.Duration{0, 1, 10, 11, 20, 21, 30}
	for i, d := range want {
		if got := starts[len(starts)-1-i]; !got.Equal(t0.Add(d * time.Second)) {
			t.Errorf("start %d at %s, want +%ds", i, got.Sub(t0), d)
		}
	}
	if got := RetryAfter(t0.Add(25*time.Second), starts, w); got != 6*time.Second {
		t.Errorf("RetryAfter = %s, want 6s (the 2nd latest start, at +21s, plus the period, less now)", got)
	}
	if got := RetryAfter(t0.Add(time.Hour), starts, w); got != 0 {
		t.Errorf("RetryAfter long after = %s", got)
	}
}

func TestQuietAt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := Quiet{Period: 5 * time.Second}
	if got := QuietAt(t0, q, time.Time{}); !got.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("QuietAt = %s", got)
	}
	if got := QuietAt(t0, q, t0.Add(2*time.Second)); !got.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("QuietAt past max_wait = %s", got)
	}
}

func TestPlanSlots(t *testing.T) {
	t.Parallel()
	queue := Slot{Rule: 0, Limit: 1, Strategy: definition.StrategyQueue}
	newest := Slot{Rule: 1, Limit: 2, Strategy: definition.StrategyCancelNewest}
	inProgress := Slot{Rule: 2, Limit: 1, Strategy: definition.StrategyCancelInProgress}
	free, full := KeyState{}, KeyState{Held: 1, Oldest: []string{"a"}}
	for _, tt := range []struct {
		name   string
		slots  []Slot
		states []KeyState
		want   slotPlan
	}{
		{"no rule", nil, nil, slotPlan{verdict: slotsFree}},
		{"every key free", []Slot{queue, inProgress}, []KeyState{free, free}, slotPlan{verdict: slotsFree}},
		{"a slot free but a run waits for it", []Slot{queue}, []KeyState{{Waiting: 1}}, slotPlan{verdict: slotsQueue}},
		{"queue when full", []Slot{queue}, []KeyState{full}, slotPlan{verdict: slotsQueue}},
		{"cancel_newest wins", []Slot{queue, newest}, []KeyState{full, {Held: 2}}, slotPlan{verdict: slotsRefuse, refused: &newest}},
		{"cancel_in_progress cancels the oldest", []Slot{inProgress}, []KeyState{{Held: 1, Waiting: 1, Oldest: []string{"a", "b"}}},
			slotPlan{verdict: slotsQueue, cancel: []string{"a", "b"}}},
		{"already cancelling", []Slot{inProgress}, []KeyState{{Held: 1}}, slotPlan{verdict: slotsQueue}},
	} {
		if got := planSlots(tt.slots, tt.states); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: planSlots = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestAdmits(t *testing.T) {
	t.Parallel()
	slots := []Slot{{Rule: 0, Limit: 1}, {Rule: 1, Limit: 2}}
	for _, tt := range []struct {
		name   string
		states []KeyState
		want   bool
	}{
		{"first at every key, a slot free at each", []KeyState{{Head: "r"}, {Held: 1, Head: "r"}}, true},
		{"another run waits first at a key", []KeyState{{Head: "r"}, {Held: 1, Head: "q"}}, false},
		{"a key full by the run's limit", []KeyState{{Head: "r"}, {Held: 2, Head: "r"}}, false},
		{"no run waits at a key", []KeyState{{Head: "r"}, {}}, false},
	} {
		if got := Admits("r", slots, tt.states); got != tt.want {
			t.Errorf("%s: Admits = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	ev := cacheEval{expr.NewCache(env, 64)}
	m := &definition.Manifest{Key: "orders",
		Concurrency: []definition.ConcurrencyRule{{KeyExpr: "input.user", Limit: 1, Strategy: definition.StrategyQueue},
			{KeyExpr: "run.subject", LimitExpr: `input.tier == "premium" ? 10 : 1`, Strategy: definition.StrategyCancelNewest}},
		Debounce:  &definition.Debounce{KeyExpr: "input.user", PeriodMS: 5000},
		Throttle:  &definition.Rate{Limit: 3, PeriodMS: 1000},
		RateLimit: &definition.Rate{KeyExpr: `run.search_attributes.region`, Limit: 100, PeriodMS: 60000},
	}
	vars := expr.Vars{Input: map[string]any{"user": int64(7), "tier": "premium"},
		Run: map[string]any{"subject": "acme", "search_attributes": map[string]any{"region": "eu"}}}
	k, err := Evaluate(context.Background(), ev, m, vars, StageAll)
	if err != nil {
		t.Fatal(err)
	}
	want := Keys{
		Slots: []Slot{{Rule: 0, Pool: Pool(KindConcurrency, "orders", "input.user"), Key: "7", Limit: 1, Strategy: definition.StrategyQueue},
			{Rule: 1, Pool: Pool(KindConcurrency, "orders", "run.subject"), Key: "acme", Limit: 10, Strategy: definition.StrategyCancelNewest}},
		Debounce:  &Quiet{Pool: Pool(KindDebounce, "orders", "input.user"), Key: "7", Period: 5 * time.Second},
		Throttle:  &Window{Pool: Pool(KindThrottle, "orders", ""), Limit: 3, Period: time.Second},
		RateLimit: &Window{Pool: Pool(KindRateLimit, "orders", "run.search_attributes.region"), Key: "eu", Limit: 100, Period: time.Minute},
	}
	if !reflect.DeepEqual(k, want) {
		t.Errorf("Evaluate =\n%+v\nwant\n%+v", k, want)
	}
	start, _ := Evaluate(context.Background(), ev, m, vars, StageStart)
	if start.Slots != nil || start.Throttle != nil || start.Debounce == nil || start.RateLimit == nil {
		t.Errorf("StageStart keyed %+v", start)
	}
	vars.Input = map[string]any{"user": 1.5}
	_, err = Evaluate(context.Background(), ev, m, vars, StageRelease)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "concurrency[0].key_expr" {
		t.Errorf("a double key: err = %v", err)
	}
}

type cacheEval struct{ c *expr.Cache }

func (e cacheEval) Eval(ctx context.Context, src string, kind expr.Kind, vars expr.Vars) (any, error) {
	p, err := e.c.Get(src, kind)
	if err != nil {
		return nil, err
	}
	return p.Eval(ctx, vars)
}

func TestAdmitAttempts(t *testing.T) {
	t.Parallel()
	offered := []Attempt{{Limit: 2, Waited: true}, {Limit: 2}, {Limit: 3}}
	if got := AdmitAttempts(1, false, offered); !reflect.DeepEqual(got, []bool{true, false, true}) {
		t.Errorf("no waiters, one in flight: %v", got)
	}
	if got := AdmitAttempts(0, true, offered); !reflect.DeepEqual(got, []bool{true, false, false}) {
		t.Errorf("waiters: only one that waited starts: %v", got)
	}
}

func TestWake(t *testing.T) {
	t.Parallel()
	waiters := []Waiter{{Limit: 3, Woken: true}, {Limit: 3}, {Limit: 2}, {Limit: 4}}
	if got := Wake(1, waiters); !reflect.DeepEqual(got, []bool{false, true, false, true}) {
		t.Errorf("Wake = %v (the woken one counts; a waiter fits by its own limit)", got)
	}
}
