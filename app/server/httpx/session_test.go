package httpx

import (
	"testing"
)

func TestSafeNext(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"/t/acme/runs":                 "/t/acme/runs",
		"/t/acme/runs?status=failed#x": "/t/acme/runs?status=failed#x",
		"/":                            "/",
		"":                             "/",
		"//evil.example":               "/",
		"/\\evil.example":              "/",
		"/\t/evil.example":             "/",
		"/\n/evil.example":             "/",
		"/\r\n/evil.example":           "/",
		"\t//evil.example":             "/",
		"/\x00/evil.example":           "/",
		"/\u0085/evil.example":         "/",
		"/a\\..\\..\\evil":             "/",
		"https://evil.example":         "/",
		"javascript:alert(1)":          "/",
		" /t/acme":                     "/",
		"/%2F/evil.example":            "/",
		"evil.example":                 "/",
		"/t/ac\tme":                    "/t/acme",
	} {
		if got := SafeNext(next); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", next, got, want)
		}
	}
}
