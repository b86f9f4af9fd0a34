package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpMetrics count requests by route template (never the raw path: ids
// would make the series unbounded), method and status, 429s and 503s
// included, and time them.
type httpMetrics struct {
	requests *prometheus.CounterVec
	seconds  *prometheus.HistogramVec
}

func newHTTPMetrics(reg *prometheus.Registry) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ductor_http_requests_total", Help: "HTTP requests answered, by route template, method and status.",
		}, []string{"route", "method", "status"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "ductor_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route template and method (long polls included).",
			Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method"}),
	}
	m.requests = register(reg, m.requests)
	m.seconds = register(reg, m.seconds)
	return m
}

// register registers c, or returns the collector already registered in
// its place (several servers may share a registry in one process).
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}

// requestMetrics observes every request once its answer is written (it
// runs outside the logger, which turns errors into answers).
func requestMetrics(m *httpMetrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			route := c.Path()
			if route == "" || c.Response().Status == http.StatusNotFound && route == "/*" {
				route = "unmatched"
			}
			method := methodLabel(c.Request().Method)
			m.requests.WithLabelValues(route, method, strconv.Itoa(c.Response().Status)).Inc()
			m.seconds.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
			return err
		}
	}
}

// methodLabel is a request's method as a metric label: a client may send
// any token, so one outside the standard methods counts as other.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}

// metricsHandler serves the registry. A collector that fails is logged
// and the rest are still served, not the whole scrape failed.
func metricsHandler(reg *prometheus.Registry, log *slog.Logger) echo.HandlerFunc {
	return echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slogPrinter{log}, ErrorHandling: promhttp.ContinueOnError,
	}))
}

type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Println(v ...any) { p.log.Warn("metrics scrape failed", "err", fmt.Sprint(v...)) }
