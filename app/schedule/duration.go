package schedule

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a Go-style ("90s", "1h30m") or ISO-8601 ("PT90S",
// "P1DT2H") duration. ISO days are 24 hours; years and months are
// refused, their length varies.
func ParseDuration(s string) (time.Duration, error) {
	if len(s) > 0 && (s[0] == 'P' || s[0] == 'p') {
		return parseISODuration(s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q: want Go style (90s, 1h30m) or ISO-8601 (PT90S)", s)
	}
	return d, nil
}

var isoDuration = regexp.MustCompile(`^[Pp](?:(\d+(?:\.\d+)?)[Ww])?(?:(\d+(?:\.\d+)?)[Dd])?(?:[Tt](?:(\d+(?:\.\d+)?)[Hh])?(?:(\d+(?:\.\d+)?)[Mm])?(?:(\d+(?:\.\d+)?)[Ss])?)?$`)

func parseISODuration(s string) (time.Duration, error) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" || s == "PT" || s[len(s)-1] == 'T' || s[len(s)-1] == 't' {
		return 0, fmt.Errorf("invalid ISO-8601 duration %q (years and months are not supported)", s)
	}
	units := []time.Duration{7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute, time.Second}
	var total float64
	for i, u := range units {
		if m[i+1] == "" {
			continue
		}
		f, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, fmt.Errorf("invalid ISO-8601 duration %q", s)
		}
		total += f * float64(u)
	}
	if total > math.MaxInt64 {
		return 0, fmt.Errorf("duration %q is too long", s)
	}
	return time.Duration(total), nil
}

// Duration is a time.Duration written in JSON as a duration string
// ("10m", "1h30m"; ISO-8601 is read too).
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d compactly: "10m", "1h30m", "1.5s".
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalJSON writes d as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string like \"10m\"")
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
