package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The inbox as the review found it, in Chromium: a pending approval's
// card says when it expires; after an owner approved an approval for
// role:owner that needs two, the card waits for another member of the
// role, not the role; a case's fields are labelled in words and a value
// the schema refuses is explained in words, not by the schema's keyword;
// the cards filter by definition and by how they reach the person (by
// name or through a role). Each state is shot at 1440 and 800 px in both
// themes and has no serious or critical axe finding.
func TestInboxReviewItemsInChromium(t *testing.T) {
	t.Parallel()
	p := startDevOnTestDatabase(t)
	refund := publishRun(t, p, "refund", `
key: refund
steps:
  - { ref: ok, type: approval, with: { approvers: [ "role:owner" ], min_approvals: 2, timeout: 48h, title: Refund the order } }
`, map[string]any{"order": 7})
	named := publishRun(t, p, "payout", `
key: payout
steps:
  - { ref: ok, type: approval, with: { approvers: [ "dev@localhost" ], title: Pay the partner } }
`, map[string]any{"partner": "acme"})
	triage := publishRun(t, p, "triage", `
key: triage
steps:
  - ref: look
    type: human_loop
    with:
      title: Triage the report
      assignees: ['role:owner']
      fields:
        type: object
        required: [refund_amount]
        properties:
          refund_amount: {type: integer, minimum: 0}
          customerNote: {type: string, minLength: 10}
`, map[string]any{"report": "late parcel"})
	for _, id := range []string{refund, named, triage} {
		waitAPI(t, p, "/runs/"+id, "the run to wait", func(r map[string]any) bool { return r["status"] == "waiting" })
	}
	ctx := newBrowser(t)
	devLogin(t, ctx, p)

	t.Run("expiry", func(t *testing.T) {
		run(t, ctx, "open the inbox", chromedp.Navigate(p.BaseURL+"/t/dev/inbox"),
			chromedp.WaitVisible(chromedp.CSS(`article.approval[data-approval] .expires`)))
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const c = [...document.querySelectorAll("article.approval")].find((a) => a.querySelector("h2").textContent.includes("Refund the order"));
			return c && c.querySelector(".expires") ? c.querySelector(".expires").textContent : "";
		})()`))
		if err != nil {
			t.Fatalf("the refund card's expiry: %v", err)
		}
		// In UTC, as every time on the pages, 48 hours on.
		m := regexp.MustCompile(`^expires (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?$`).FindStringSubmatch(strings.TrimSpace(got))
		if m == nil {
			t.Fatalf("the refund card says %q of its expiry", got)
		}
		at, err := time.Parse("2006-01-02 15:04:05", m[1])
		if d := time.Until(at); err != nil || d < 47*time.Hour || d > 49*time.Hour {
			t.Errorf("the refund card expires %q, %v from now (%v), want 48h", got, d, err)
		}
		if n := count(t, ctx, "article.approval .expires"); n != 1 {
			t.Errorf("%d cards say when they expire, want only the one with a timeout", n)
		}
		shoot(t, ctx, "review-inbox-expiry")
		axeBothThemes(t, ctx, "the inbox")
	})

	t.Run("role after an owner approved", func(t *testing.T) {
		run(t, ctx, "approve the refund", chromedp.Navigate(p.BaseURL+"/t/dev/inbox?definition=refund"),
			chromedp.WaitVisible(chromedp.CSS("article.approval button.approve")),
			chromedp.Click(chromedp.CSS("article.approval button.approve")),
			chromedp.WaitVisible(chromedp.CSS("#notice")))
		run(t, ctx, "the refund, pending still", chromedp.Navigate(p.BaseURL+"/t/dev/inbox?tab=decided&definition=refund"),
			chromedp.WaitVisible(chromedp.CSS("article.approval .progress")))
		got := text(t, ctx, "article.approval .progress")
		if !strings.Contains(got, "1 of 2 approved") || !strings.Contains(got, "waiting for another member of role:owner") {
			t.Errorf("after an owner approved the card says %q", got)
		}
		if strings.Contains(got, "waiting for role:owner") {
			t.Errorf("the card still waits for the role itself: %q", got)
		}
		shoot(t, ctx, "review-inbox-role-progress")
	})

	t.Run("case words", func(t *testing.T) {
		run(t, ctx, "open the case", chromedp.Navigate(p.BaseURL+"/t/dev/inbox?definition=triage"),
			chromedp.WaitVisible(chromedp.CSS("article.case form.case-form")))
		for field, want := range map[string]string{"refund_amount": "Refund amount", "customerNote": "Customer note"} {
			if got := text(t, ctx, `article.case label[data-field="`+field+`"] .case-label`); !strings.HasPrefix(got, want) {
				t.Errorf("the field %s is labelled %q, want %q", field, got, want)
			}
		}
		run(t, ctx, "save a note too short", chromedp.SetValue(chromedp.CSS(`article.case input[name="field.refund_amount"]`), "5"),
			chromedp.SetValue(chromedp.CSS(`article.case input[name="field.customerNote"]`), "ab"),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("article.case form.case-form").noValidate = true`),
			chromedp.Evaluate[chromedp.Void](`document.querySelector("article.case button.save-case").click()`),
			chromedp.WaitVisible(chromedp.CSS(`article.case label[data-field="customerNote"] .field-error`)))
		got := text(t, ctx, `article.case label[data-field="customerNote"] .field-error`)
		if !strings.Contains(got, "at least 10 characters") || strings.Contains(got, "minLength") || strings.Contains(got, "want") {
			t.Errorf("the refused note says %q, want words", got)
		}
		shoot(t, ctx, "review-inbox-case-words")
		axeBothThemes(t, ctx, "the refused case")
	})

	t.Run("filters", func(t *testing.T) {
		cards := func() string {
			s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("article.card h2")].map((h) => h.textContent.trim()).sort().join(" | ")`))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		run(t, ctx, "filter by definition", chromedp.Navigate(p.BaseURL+"/t/dev/inbox"),
			chromedp.WaitVisible(chromedp.CSS("#inbox-filters")),
			chromedp.SetValue(chromedp.CSS("#inbox-definition"), "payout"),
			chromedp.Click(chromedp.CSS("#inbox-filter")),
			chromedp.WaitReady(chromedp.CSS(`#inbox-definition option[value="payout"][selected]`)))
		if got := cards(); !strings.Contains(got, "Pay the partner") || strings.Contains(got, "Triage") || strings.Contains(got, "Refund") {
			t.Errorf("the payout filter shows %q", got)
		}
		run(t, ctx, "addressed by name", chromedp.SetValue(chromedp.CSS("#inbox-definition"), ""),
			chromedp.SetValue(chromedp.CSS("#inbox-assigned"), "me"),
			chromedp.Click(chromedp.CSS("#inbox-filter")),
			chromedp.WaitReady(chromedp.CSS(`#inbox-assigned option[value="me"][selected]`)))
		if got := cards(); !strings.Contains(got, "Pay the partner") || strings.Contains(got, "Triage") {
			t.Errorf("addressed by name, the inbox shows %q", got)
		}
		shoot(t, ctx, "review-inbox-filter-me")
		run(t, ctx, "through a role", chromedp.SetValue(chromedp.CSS("#inbox-assigned"), "role"),
			chromedp.Click(chromedp.CSS("#inbox-filter")),
			chromedp.WaitReady(chromedp.CSS(`#inbox-assigned option[value="role"][selected]`)))
		if got := cards(); strings.Contains(got, "Pay the partner") || !strings.Contains(got, "Triage the report") {
			t.Errorf("through a role, the inbox shows %q", got)
		}
		shoot(t, ctx, "review-inbox-filter-role")
		axeBothThemes(t, ctx, "the filtered inbox")
	})
}
