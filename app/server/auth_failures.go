package server

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/ductor/ductor/app/apperr"
)

// Failed authentications per client address: a budget of
// DefaultAuthFailureBurst that refills at DefaultAuthFailuresPerMinute.
const (
	DefaultAuthFailuresPerMinute = 20
	DefaultAuthFailureBurst      = 20
	// maxFailureAddrs bounds the addresses remembered; past it those whose
	// budget is full are forgotten, and if that is not enough, all are.
	maxFailureAddrs = 100_000
)

// failureLimiter counts failed authentications per client address. The
// address is the connection's peer (an IPv6 address by its /64), never a
// forwarding header, which the client writes. Each process counts its
// own.
type failureLimiter struct {
	per   rate.Limit
	burst int

	mu    sync.Mutex
	addrs map[string]*rate.Limiter
}

func newFailureLimiter(perMinute float64, burst int) *failureLimiter {
	if perMinute <= 0 {
		perMinute = DefaultAuthFailuresPerMinute
	}
	if burst <= 0 {
		burst = DefaultAuthFailureBurst
	}
	return &failureLimiter{per: rate.Limit(perMinute / 60), burst: burst, addrs: map[string]*rate.Limiter{}}
}

// check refuses an address that has spent its budget, with Retry-After.
func (f *failureLimiter) check(c echo.Context, addr string) error {
	now := time.Now()
	f.mu.Lock()
	l := f.addrs[addr]
	f.mu.Unlock()
	if l == nil {
		return nil
	}
	tokens := l.TokensAt(now)
	if tokens >= 1 {
		return nil
	}
	secs := int(math.Ceil((1 - tokens) / float64(f.per)))
	c.Response().Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	return apperr.New(apperr.RateLimited, "too many failed authentications from this address; retry in %d s", max(secs, 1))
}

// fail spends one of the address's budget.
func (f *failureLimiter) fail(addr string) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.addrs[addr]
	if l == nil {
		f.prune(now)
		l = rate.NewLimiter(f.per, f.burst)
		f.addrs[addr] = l
	}
	l.AllowN(now, 1)
}

func (f *failureLimiter) prune(now time.Time) {
	if len(f.addrs) < maxFailureAddrs {
		return
	}
	for a, l := range f.addrs {
		if l.TokensAt(now) >= float64(f.burst) {
			delete(f.addrs, a)
		}
	}
	if len(f.addrs) >= maxFailureAddrs {
		clear(f.addrs)
	}
}

// clientAddr is the request's peer address: an IPv4 address, or an IPv6
// address's /64 (one host holds a whole /64).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
