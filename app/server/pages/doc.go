// Package pages is Ductor's dashboard: home and login, the runs list and
// the run inspector with its live view and operator actions, the
// definitions editor, the approvals inbox, the schedules, webhooks and
// batches pages, and the tenant's settings. Pages are server-rendered
// from the templ components in package views. routes_pages.go lists the
// routes (Routes), and package server mounts them. It imports package
// httpx for what it shares with the API, and never package api.
package pages
