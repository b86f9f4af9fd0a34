package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/server/httpx/paging"
)

// KeyedPage reads the page of a keyed list (definitions, schedules,
// webhooks) that ?limit= and ?cursor= ask for: list reads at most n
// items after a key, key names an item. It gives the page and the
// answer it goes in, holding next_cursor when a page follows.
func KeyedPage[T any](c echo.Context, list func(after string, n int) ([]T, error), key func(T) string) ([]T, map[string]any, error) {
	limit, err := LimitParam(c)
	if err != nil {
		return nil, nil, err
	}
	after, err := paging.DecodeKey(c.QueryParam("cursor"))
	if err != nil {
		return nil, nil, err
	}
	items, err := list(after, limit+1)
	if err != nil {
		return nil, nil, err
	}
	page, next := paging.Keyed(items, limit, key)
	resp := map[string]any{}
	if next != "" {
		resp["next_cursor"] = next
	}
	return page, resp, nil
}
