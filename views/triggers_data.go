package views

import (
	"strings"

	"github.com/ductor/ductor/app/schedule"
)

// SpecText is a schedule spec in one line: "0 8 * * 1-5 Europe/Paris",
// "every 10m".
func SpecText(s schedule.Spec) string {
	var parts []string
	if s.Cron != "" {
		parts = append(parts, s.Cron)
	} else {
		parts = append(parts, "every "+s.Interval.String())
	}
	if s.Timezone != "" {
		parts = append(parts, s.Timezone)
	}
	if s.Offset != 0 {
		parts = append(parts, "+"+s.Offset.String())
	}
	if s.Jitter != 0 {
		parts = append(parts, "jitter "+s.Jitter.String())
	}
	return strings.Join(parts, " ")
}
