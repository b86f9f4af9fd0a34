package tenantsecrets

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/store"
)

// rekeyPage is how many rows a rekey reads at a time.
const rekeyPage = 500

// Rekeyed counts what a rekey did.
type Rekeyed struct {
	Secrets, Webhooks int // re-sealed under the current key
	Current           int // already under it
}

// Rekey re-seals every tenant secret and every webhook secret sealed
// under the box's previous key under its current one, so that the
// previous key can then be dropped. A value that opens under neither key
// stops it with an error naming the row; a value changed meanwhile (set
// again, rotated) is already under the current key and is left alone. It
// is safe to run again, and while the servers serve.
func (s *Service) Rekey(ctx context.Context) (Rekeyed, error) {
	var out Rekeyed
	box, err := s.box()
	if err != nil {
		return out, err
	}
	st := s.cfg.Store
	var afterTenant uuid.UUID
	afterName := ""
	for {
		page, err := st.SecretSealedPage(ctx, afterTenant, afterName, rekeyPage)
		if err != nil {
			return out, err
		}
		for _, r := range page {
			resealed, changed, err := box.Reseal(r.Value, store.TenantSecretAAD(r.TenantID, r.Name))
			if err != nil {
				return out, fmt.Errorf("tenant %s secret %s opens under neither key", r.TenantID, r.Name)
			}
			if !changed {
				out.Current++
				continue
			}
			if _, err := st.SecretReseal(ctx, r.TenantID, r.Name, r.Value, resealed); err != nil {
				return out, err
			}
			out.Secrets++
		}
		if len(page) < rekeyPage {
			break
		}
		afterTenant, afterName = page[len(page)-1].TenantID, page[len(page)-1].Name
	}
	afterTenant, afterName = uuid.UUID{}, ""
	for {
		page, err := st.RekeyWebhookPage(ctx, afterTenant, afterName, rekeyPage)
		if err != nil {
			return out, err
		}
		for _, w := range page {
			changed, err := s.rekeyWebhook(ctx, w)
			if err != nil {
				return out, err
			}
			if changed {
				out.Webhooks++
			} else {
				out.Current++
			}
		}
		if len(page) < rekeyPage {
			break
		}
		afterTenant, afterName = page[len(page)-1].TenantID, page[len(page)-1].ID
	}
	return out, nil
}

func (s *Service) rekeyWebhook(ctx context.Context, w store.SealedWebhook) (bool, error) {
	aad := store.WebhookAAD(w.TenantID, w.ID)
	next := w
	var changed, prevChanged bool
	var err error
	if next.Secret, changed, err = s.cfg.Box.Reseal(w.Secret, aad); err != nil {
		return false, fmt.Errorf("tenant %s webhook %s: its secret opens under neither key", w.TenantID, w.ID)
	}
	if w.PreviousSecret != nil {
		next.PreviousSecret, prevChanged, err = s.cfg.Box.Reseal(w.PreviousSecret, aad)
		if err != nil {
			// A rotated-out secret under neither key can no longer be
			// checked by anything: drop it rather than keep what no key
			// opens.
			next.PreviousSecret, prevChanged = nil, true
		}
	}
	if !changed && !prevChanged {
		return false, nil
	}
	_, err = s.cfg.Store.RekeyWebhookReseal(ctx, w, next)
	return err == nil, err
}
