package static

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// palettes reads the colour variables of app.css: the light ones of
// :root and the dark ones of its prefers-color-scheme: dark block.
func palettes(t *testing.T) map[string]map[string]string {
	t.Helper()
	css, err := files.ReadFile("css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	src := string(css)
	dark := strings.Index(src, "@media (prefers-color-scheme: dark)")
	if dark < 0 {
		t.Fatal("app.css has no dark theme")
	}
	vars := regexp.MustCompile(`--([a-z-]+):\s*(#[0-9a-fA-F]{6})`)
	read := func(s string) map[string]string {
		out := map[string]string{}
		for _, m := range vars.FindAllStringSubmatch(s, -1) {
			out[m[1]] = m[2]
		}
		return out
	}
	end := strings.Index(src[dark:], "}\n}") + dark
	return map[string]map[string]string{"light": read(src[:dark]), "dark": read(src[dark:end])}
}

func luminance(hex string) float64 {
	lin := func(c float64) float64 {
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	var rgb [3]float64
	for i := range rgb {
		v, _ := strconv.ParseUint(hex[1+2*i:3+2*i], 16, 8)
		rgb[i] = lin(float64(v) / 255)
	}
	return 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
}

// contrast is WCAG 2's contrast ratio of two colours.
func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// Every text colour of the palette reads at WCAG AA (4.5:1) on the page
// and on panels, and every filled control's text on its fill, in both
// themes.
func TestPaletteMeetsWCAGAA(t *testing.T) {
	t.Parallel()
	text := []string{"fg", "muted", "accent", "ok", "fail", "run", "wait", "skip", "pending", "choice"}
	fills := map[string]string{"on-accent": "accent", "on-wait": "wait", "on-fail": "fail"}
	for theme, p := range palettes(t) {
		check := func(fg, bg string) {
			if p[fg] == "" || p[bg] == "" {
				t.Errorf("%s: --%s or --%s is missing", theme, fg, bg)
				return
			}
			if r := contrast(p[fg], p[bg]); r < 4.5 {
				t.Errorf("%s: --%s %s on --%s %s is %.2f:1, under 4.5:1", theme, fg, p[fg], bg, p[bg], r)
			}
		}
		for _, fg := range text {
			check(fg, "bg")
			check(fg, "panel")
		}
		for fg, bg := range fills {
			check(fg, bg)
		}
	}
}

// The stylesheets colour text only through the palette: a fixed colour
// would escape the check above.
func TestNoFixedTextColours(t *testing.T) {
	t.Parallel()
	fixed := regexp.MustCompile(`(?m)(^|[;{ ])(color|fill):\s*#[0-9a-fA-F]{3,6}`)
	for _, name := range []string{"css/app.css", "css/runs.css", "css/editor.css"} {
		css, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(css), "\n") {
			if fixed.MatchString(line) && !strings.Contains(line, "tok-") {
				t.Errorf("%s: %s", name, line)
			}
		}
	}
}

func TestContrastOfBlackOnWhite(t *testing.T) {
	t.Parallel()
	if r := contrast("#ffffff", "#000000"); math.Abs(r-21) > 0.01 {
		t.Errorf("white on black is %.2f:1, want 21:1", r)
	}
}
