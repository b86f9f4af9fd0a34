package telemetry

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ductor/ductor/app/version"
)

// BuildInfo is ductor_build_info: always 1, labelled with the running
// build's version, VCS revision and Go release.
func BuildInfo() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "ductor_build_info", Help: "The running build of Ductor (always 1).",
		ConstLabels: prometheus.Labels{"version": version.String(), "revision": version.Revision(), "goversion": version.GoVersion()},
	}, func() float64 { return 1 })
}

// poolStat is one figure of pgxpool.Stat.
type poolStat struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(*pgxpool.Stat) float64
}

func poolGauge(name, help string, v func(*pgxpool.Stat) float64) poolStat {
	return poolStat{prometheus.NewDesc("ductor_db_pool_"+name, help, nil, nil), prometheus.GaugeValue, v}
}

func poolCounter(name, help string, v func(*pgxpool.Stat) float64) poolStat {
	return poolStat{prometheus.NewDesc("ductor_db_pool_"+name, help, nil, nil), prometheus.CounterValue, v}
}

var poolStats = []poolStat{
	poolGauge("acquired_connections", "Connections in use.", func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
	poolGauge("idle_connections", "Connections idle in the pool.", func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
	poolGauge("constructing_connections", "Connections being opened.", func(s *pgxpool.Stat) float64 { return float64(s.ConstructingConns()) }),
	poolGauge("total_connections", "Connections open or being opened.", func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) }),
	poolGauge("max_connections", "The pool's size (pool_max_conns).", func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
	poolCounter("acquires_total", "Connections acquired from the pool.", func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
	poolCounter("acquire_wait_seconds_total", "Time spent acquiring connections.", func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() }),
	poolCounter("empty_acquires_total", "Acquires that had to wait for a connection: none was idle.", func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
	poolCounter("canceled_acquires_total", "Acquires abandoned (context ended) before a connection came.", func(s *pgxpool.Stat) float64 { return float64(s.CanceledAcquireCount()) }),
	poolCounter("new_connections_total", "Connections opened.", func(s *pgxpool.Stat) float64 { return float64(s.NewConnsCount()) }),
}

// poolCollector reports a pgx pool's statistics when scraped.
type poolCollector struct{ pool *pgxpool.Pool }

// PoolStats reports pool's connection statistics as ductor_db_pool_*.
func PoolStats(pool *pgxpool.Pool) prometheus.Collector { return poolCollector{pool} }

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, s := range poolStats {
		ch <- s.desc
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stat()
	for _, s := range poolStats {
		ch <- prometheus.MustNewConstMetric(s.desc, s.kind, s.value(st))
	}
}

// InitSeries creates v's series of each label value, at 0, so that a
// rate over them is defined before the first increment.
func InitSeries(v *prometheus.CounterVec, values []string) {
	for _, l := range values {
		v.WithLabelValues(l)
	}
}
