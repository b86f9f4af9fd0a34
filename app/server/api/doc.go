// Package api is Ductor's JSON API under /api/v1: runs and their
// history, children and attempts; definitions (compile, drafts,
// versions); schedules; webhooks and the signed deliveries on /hooks;
// tasks for bridge-SDK workers; signals, events, approvals and cases for
// waiting runs; batches; whoami; and the OpenAPI document (openapi.json)
// that describes all of it. Every /api/v1 route is authenticated by an
// API key and confined to the key's tenant; routes_api.go lists them
// (Routes), and package server mounts them. It imports package httpx for
// what it shares with the dashboard, and never package pages.
package api
