package httpx

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/jsonvalue"
	"github.com/ductor/ductor/app/store"
)

// RunQuery is the runs list's filter as people and programs write it: the
// list's query string (status, definition, definition_match, subject, q,
// parent_run_id, attr.NAME, attrs, from, to) or a batch's JSON filter.
type RunQuery struct {
	Status     string `json:"status,omitempty"`
	Definition string `json:"definition,omitempty"`
	// DefinitionMatch is how Definition matches keys: exact (default),
	// prefix or contains (ignoring case).
	DefinitionMatch string `json:"definition_match,omitempty"`
	Subject         string `json:"subject,omitempty"`
	// Q searches run ids and subjects by their beginning; name=value
	// words in it match search attributes.
	Q           string         `json:"q,omitempty"`
	ParentRunID string         `json:"parent_run_id,omitempty"`
	Attributes  map[string]any `json:"attributes,omitempty"`
	// From and To bound the runs' creation (RFC 3339, or 2006-01-02T15:04
	// in UTC); To is exclusive.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// RunQueryOf reads the filter from a query string.
func RunQueryOf(q url.Values) (RunQuery, error) {
	rq := RunQuery{
		Status: q.Get("status"), Definition: q.Get("definition"), DefinitionMatch: q.Get("definition_match"),
		Subject: q.Get("subject"), Q: q.Get("q"), ParentRunID: q.Get("parent_run_id"), From: q.Get("from"), To: q.Get("to"),
	}
	for name, values := range q {
		if attr, ok := strings.CutPrefix(name, "attr."); ok && attr != "" {
			if rq.Attributes == nil {
				rq.Attributes = map[string]any{}
			}
			rq.Attributes[attr] = values[0]
		}
	}
	var err error
	rq.Attributes, err = attrsParam(q.Get("attrs"), rq.Attributes)
	return rq, err
}

// maxPatternKeys bounds the definition keys a prefix or contains match
// considers.
const maxPatternKeys = 1000

// Filter turns the query into the store's filter for the tenant.
func (rq RunQuery) Filter(ctx context.Context, s *store.Store, tenantID uuid.UUID) (store.RunFilter, error) {
	f := store.RunFilter{Status: rq.Status, Subject: rq.Subject, Attributes: rq.Attributes}
	if err := rq.definitions(ctx, s, tenantID, &f); err != nil {
		return f, err
	}
	if rq.ParentRunID != "" {
		id, err := uuid.Parse(rq.ParentRunID)
		if err != nil {
			return f, apperr.New(apperr.Invalid, "parent_run_id %q is not a run id", rq.ParentRunID)
		}
		f.ParentID = &id
	}
	words, attrs := splitQuery(rq.Q)
	f.Query = strings.Join(words, " ")
	if len(attrs) > 0 {
		if f.Attributes == nil {
			f.Attributes = map[string]any{}
		}
		for k, v := range attrs {
			f.Attributes[k] = v
		}
	}
	var err error
	if f.From, err = timeParam("from", rq.From); err != nil {
		return f, err
	}
	to, err := timeParam("to", rq.To)
	if err == nil && !to.IsZero() {
		f.Before = &store.RunCursor{CreatedAt: to, ID: uuid.Nil}
	}
	return f, err
}

// definitions applies the definition filter: one key, or every key of
// the tenant that starts with or contains the text.
func (rq RunQuery) definitions(ctx context.Context, s *store.Store, tenantID uuid.UUID, f *store.RunFilter) error {
	switch rq.DefinitionMatch {
	case "", "exact":
		f.Definition = rq.Definition
		return nil
	case "prefix", "contains":
	default:
		return apperr.New(apperr.Invalid, "definition_match is exact, prefix or contains, not %q", rq.DefinitionMatch)
	}
	if rq.Definition == "" {
		return nil
	}
	defs, err := s.DefinitionList(ctx, tenantID, "", maxPatternKeys)
	if err != nil {
		return err
	}
	want := strings.ToLower(rq.Definition)
	f.Definitions = []string{}
	for _, d := range defs {
		k := strings.ToLower(d.Key)
		if strings.HasPrefix(k, want) || (rq.DefinitionMatch == "contains" && strings.Contains(k, want)) {
			f.Definitions = append(f.Definitions, d.Key)
		}
	}
	return nil
}

// splitQuery separates q's name=value words (search attributes) from the
// rest (an id or subject prefix).
func splitQuery(q string) ([]string, map[string]any) {
	var words []string
	attrs := map[string]any{}
	for _, w := range strings.Fields(q) {
		name, value, ok := strings.Cut(w, "=")
		if !ok || name == "" {
			words = append(words, w)
			continue
		}
		attrs[name] = attrValue(value)
	}
	return words, attrs
}

// attrsParam adds "name=value" pairs (space or comma separated) to the
// attribute filter.
func attrsParam(raw string, into map[string]any) (map[string]any, error) {
	for _, pair := range strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' }) {
		name, value, ok := strings.Cut(pair, "=")
		if !ok || name == "" {
			return nil, apperr.New(apperr.Invalid, "attributes are name=value pairs, not %q", pair)
		}
		if into == nil {
			into = map[string]any{}
		}
		into[name] = attrValue(value)
	}
	return into, nil
}

// attrValue is a JSON number or boolean as that value (by the value
// model: an integer is an int64), anything else as the string.
func attrValue(s string) any {
	if v, err := jsonvalue.Decode([]byte(s)); err == nil {
		switch v.(type) {
		case int64, float64, bool:
			return v
		}
	}
	return s
}

// timeParam parses a datetime-local value (UTC) or RFC 3339; empty is
// the zero time.
func timeParam(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, apperr.New(apperr.Invalid, "%s must be a time like 2006-01-02T15:04 (UTC)", name)
}
