package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ductor/ductor/app/testdb"
	"github.com/ductor/ductor/app/testwait"
)

// metricValue is the value of the one sample of series (name and labels
// exactly as exposed) in a scrape, and whether it is there.
func metricValue(body, series string) (float64, bool) {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return v, err == nil
}

// A running server's deliveries, seen on its /metrics: one delivered at
// once, one delivered after a 500 (a retry), one filtered out, and one
// sent again by hand; every outcome series is there with the count the
// delivery log shows, the latency histogram counts every request made,
// and promtool accepts the scrape.
func TestSubscriptionDeliveryMetricsOnAScrape(t *testing.T) {
	t.Parallel()
	var okHits, flakyHits atomic.Int64
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		okHits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(ok.Close)
	flaky := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if flakyHits.Add(1) == 1 {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(flaky.Close)
	_, dbURL := testdb.SchemaURL(t)
	o := &opsProcess{program: start(t, map[string]string{
		"DATABASE_URL": dbURL, "DUCTOR_ADDR": "127.0.0.1:0", "DUCTOR_HTTP_ALLOW": "127.0.0.1/32", "DUCTOR_API_RATE": "0",
	}, "dev")}
	o.key = o.devKey(t)

	create := func(url, filter string) string {
		t.Helper()
		code, out := o.call(t, "POST", "/subscriptions",
			fmt.Sprintf(`{"url": %q, "events": ["order.placed"], "filter_expr": %q}`, url, filter), nil)
		if code != 201 {
			t.Fatalf("create subscription = %d %v", code, out)
		}
		return out["id"].(string)
	}
	direct, retried, filtered := create(ok.URL, ""), create(flaky.URL, ""), create(ok.URL, "event.total > 100.0")
	if code, out := o.call(t, "POST", "/events", `{"name": "order.placed", "data": {"total": 5.0}}`, nil); code/100 != 2 {
		t.Fatalf("publish = %d %v", code, out)
	}

	// delivery waits for the subscription's one delivery to be status
	// with attempts attempts, and returns its id.
	delivery := func(sub, status string, attempts int) string {
		t.Helper()
		var id string
		testwait.Eventually(t, 30*time.Second, "subscription "+sub+"'s delivery "+status, func() bool {
			_, out := o.call(t, "GET", "/subscriptions/"+sub+"/deliveries", "", nil)
			list, _ := out["deliveries"].([]any)
			if len(list) != 1 {
				return false
			}
			d := list[0].(map[string]any)
			id, _ = d["id"].(string)
			as, _ := d["attempts"].([]any)
			return d["status"] == status && len(as) == attempts
		})
		return id
	}
	first := delivery(direct, "delivered", 1)
	delivery(retried, "delivered", 2)
	delivery(filtered, "filtered", 1)
	if code, out := o.call(t, "POST", "/subscriptions/"+direct+"/deliveries/"+first+"/redeliver", "", nil); code != 202 {
		t.Fatalf("redeliver = %d %v", code, out)
	}
	delivery(direct, "delivered", 2)
	if okHits.Load() != 2 || flakyHits.Load() != 2 {
		t.Fatalf("receivers got %d and %d requests, want 2 and 2", okHits.Load(), flakyHits.Load())
	}

	want := map[string]float64{
		`ductor_subscription_deliveries_total{outcome="delivered"}`: 3, // direct twice, retried once
		`ductor_subscription_deliveries_total{outcome="retry"}`:     1, // retried's 500
		`ductor_subscription_deliveries_total{outcome="filtered"}`:  1,
		`ductor_subscription_deliveries_total{outcome="failed"}`:    0,
		`ductor_subscription_delivery_seconds_count`:                4, // every request made
		`ductor_subscription_redeliveries_total`:                    1,
		`ductor_subscriptions_disabled_total`:                       0,
	}
	var body string
	testwait.Eventually(t, 10*time.Second, "the scrape shows every delivery", func() bool {
		var status int
		status, body = get(t, o.BaseURL+"/metrics", "")
		if status != 200 {
			t.Fatalf("/metrics = %d", status)
		}
		v, _ := metricValue(body, `ductor_subscription_deliveries_total{outcome="delivered"}`)
		return v >= 3
	})
	for series, n := range want {
		if got, ok := metricValue(body, series); !ok || got != n {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, n)
		}
	}
	if bucket, ok := metricValue(body, `ductor_subscription_delivery_seconds_bucket{le="+Inf"}`); !ok || bucket != 4 {
		t.Errorf("latency +Inf bucket = %v (present %v), want 4", bucket, ok)
	}
	promtoolCheck(t, body)
}
