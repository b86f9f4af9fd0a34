package pages

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/expr"
)

// maxTryItem bounds the index of the item a try may choose.
const maxTryItem = 1_000_000

// parseTryChoices reads what a try's caller chose besides the sample:
// item, the index of the list element (for_each, a scatter's items) the
// expressions see as item (default 0, the first), and now, the time they
// see as now (RFC 3339; default the server's clock), set into the
// sample.
func parseTryChoices(item, now string, s *trySample) (int, error) {
	i := 0
	if item = strings.TrimSpace(item); item != "" {
		n, err := strconv.Atoi(item)
		if err != nil || n < 0 || n > maxTryItem {
			return 0, apperr.New(apperr.Invalid, "item must be the index of an item, a whole number from 0 to %d, not %q", maxTryItem, item)
		}
		i = n
	}
	if now = strings.TrimSpace(now); now != "" {
		at, err := time.Parse(time.RFC3339Nano, now)
		if err != nil {
			return 0, apperr.New(apperr.Invalid, "now must be an RFC 3339 time like 2025-01-02T15:04:05Z, not %q", now)
		}
		s.Now = at.UTC()
	}
	return i, nil
}

// itemNote says which element the expressions below a list see.
func itemNote(i int) string {
	if i == 0 {
		return "the expressions below see the first as item (index 0)"
	}
	return fmt.Sprintf("the expressions below see the one at index %d as item", i)
}

// noSuchItem is the result that stops a try whose chosen item is past
// the end of the list.
func noSuchItem(i, n int) tryResult {
	msg := fmt.Sprintf("there is no item at index %d: the list has %d items", i, n)
	if n > 0 {
		msg += fmt.Sprintf("; choose an index from 0 to %d", n-1)
	}
	return tryResult{Path: "item", Error: msg, Code: expr.CodeExpressionError}
}

// itemKey is the key of the element the expressions see as item: among
// the keys shown when it is one of the first maxTryKeys, else key_expr
// evaluated for it alone.
func (t *trier) itemKey(with map[string]any, rs []tryResult, v expr.Vars) (string, bool) {
	for _, r := range rs {
		if r.Path != "with.key_expr" || !r.OK {
			continue
		}
		if keys, ok := r.Value.([]any); ok && t.item < len(keys) {
			return keyText(keys[t.item]), true
		}
	}
	src, _ := with["key_expr"].(string)
	if src == "" || t.item < maxTryKeys || v.Item == nil {
		return "", false
	}
	r := t.eval("with.key_expr", src, expr.KindAny, v)
	if !r.OK {
		return "", false
	}
	return keyText(r.Value), true
}

func keyText(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	raw, _ := json.Marshal(k)
	return string(raw)
}
