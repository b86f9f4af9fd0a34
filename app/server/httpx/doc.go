// Package httpx holds what the JSON API (package api) and the dashboard
// (package pages) both use, so that neither imports the other:
//
//   - errors.go: an error's code becomes an HTTP status here and nowhere
//     else, as the JSON error shape or the error page;
//   - bind.go, input.go, query_params.go: bounded request bodies, JSON
//     binding, trigger input checks, the query parameters each route
//     allows, NUL refusal;
//   - apikey_auth.go, auth_failures.go, client_addr.go, ratelimit.go,
//     rate_charge.go, middleware.go: API keys, their scopes and rate
//     limits, and the budget of failed authentications per client;
//   - session.go, csrf.go, flash.go, tenant_access.go: the dashboard's
//     sessions, cross-site refusal, one-time notices, and the viewer's
//     membership of a tenant;
//   - headers.go, render.go, jsonserializer.go: the security headers,
//     HTML answers and JSON encoding of every response;
//   - keyed_list.go, run_filter.go, run_paging.go and package
//     httpx/paging: lists paged by opaque cursors;
//   - audit_changes.go, batch_create.go, schedule_request.go,
//     webhook_store.go, waits.go, case_redact.go, idempotency.go: what
//     both sides read and write the same way.
package httpx
