package views

import (
	"net/url"

	"github.com/ductor/ductor/app/store"
)

// webhookURL is a webhook's page, showing the deliveries of one result
// ("" for both).
func webhookURL(slug, id, result string) string {
	u := tenantURL(slug, "/webhooks/"+url.PathEscape(id))
	if result != "" {
		u += "?" + url.Values{"result": {result}}.Encode()
	}
	return u
}

// deliveryResult is a logged delivery's result: accepted or refused.
func deliveryResult(d store.LoggedDelivery) string {
	if d.Refused {
		return "refused"
	}
	return "accepted"
}

// deliveryClass colours a logged delivery's result.
func deliveryClass(d store.LoggedDelivery) string {
	if d.Refused {
		return "failed"
	}
	return "succeeded"
}

// deliveryWhy says what became of a delivery: a duplicate of one already
// accepted, or why it was refused.
func deliveryWhy(d store.LoggedDelivery) string {
	if !d.Refused {
		if d.Outcome == "duplicate" {
			return "a duplicate: its first event"
		}
		return ""
	}
	switch d.Reason {
	case "missing_signature":
		return "no signature"
	case "bad_signature":
		return "bad signature"
	case "stale_timestamp":
		return "timestamp more than 5 minutes off"
	case "invalid_body":
		return "body is not JSON"
	case "too_large":
		return "body too large"
	case "id_reused":
		return "delivery id already used for another body"
	}
	return d.Reason
}
