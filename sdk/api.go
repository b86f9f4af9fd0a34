package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The rest of the API: definitions, runs, the inbox. Every method is one
// call; list methods take a page's Cursor and answer the next one.

// Whoami is the calling key: its tenant and scopes.
type Whoami struct {
	TenantID string   `json:"tenant_id"`
	KeyID    string   `json:"key_id"`
	KeyName  string   `json:"key_name"`
	Prefix   string   `json:"prefix"`
	Scopes   []string `json:"scopes"`
}

// Whoami reads which tenant the key acts for, and its scopes.
func (c *Client) Whoami(ctx context.Context) (Whoami, error) {
	var w Whoami
	_, err := c.do(ctx, http.MethodGet, "/whoami", nil, &w)
	return w, err
}

// Compiled is a document the server compiled: its manifest and hash.
type Compiled struct {
	Manifest     json.RawMessage `json:"manifest"`
	ManifestHash string          `json:"manifest_hash"`
}

// Compile compiles d on the server without storing anything. An invalid
// definition is an [APIError] with status 422 listing every problem in
// Details.
func (c *Client) Compile(ctx context.Context, d *Definition) (Compiled, error) {
	var out Compiled
	_, err := c.do(ctx, http.MethodPost, "/compile", d, &out)
	return out, err
}

// SaveDraft saves d as its key's draft (publish it later with
// PublishDraft).
func (c *Client) SaveDraft(ctx context.Context, d *Definition) error {
	_, err := c.do(ctx, http.MethodPut, "/definitions/"+url.PathEscape(d.Key), d, nil)
	return err
}

// PublishDraft publishes key's draft as its next version.
func (c *Client) PublishDraft(ctx context.Context, key string) (Version, error) {
	var v Version
	status, err := c.do(ctx, http.MethodPost, "/definitions/"+url.PathEscape(key)+"/versions", nil, &v)
	v.Created = status == http.StatusCreated
	return v, err
}

// DefinitionInfo is a definition as lists show it; Versions only from
// GetDefinition.
type DefinitionInfo struct {
	Key           string        `json:"key"`
	Name          string        `json:"name"`
	LatestVersion *int          `json:"latest_version"`
	HasDraft      bool          `json:"has_draft"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
	Versions      []VersionInfo `json:"versions"`
}

// VersionInfo is a published version; Source and Manifest only from
// GetVersion.
type VersionInfo struct {
	Key           string          `json:"key"`
	Version       int             `json:"version"`
	ManifestHash  string          `json:"manifest_hash"`
	Format        string          `json:"format"`
	Published     bool            `json:"published"`
	PublishedAt   time.Time       `json:"published_at"`
	UnpublishedAt *time.Time      `json:"unpublished_at"`
	Source        string          `json:"source"`
	Manifest      json.RawMessage `json:"manifest"`
}

// Page asks for one page of a list.
type Page struct {
	Limit  int    // 0: the server's default (50)
	Cursor string // the previous page's NextCursor
}

func (p Page) query(q url.Values) url.Values {
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Cursor != "" {
		q.Set("cursor", p.Cursor)
	}
	return q
}

// DefinitionPage is a page of definitions by key.
type DefinitionPage struct {
	Definitions []DefinitionInfo `json:"definitions"`
	NextCursor  string           `json:"next_cursor"`
}

// ListDefinitions lists the tenant's definitions by key.
func (c *Client) ListDefinitions(ctx context.Context, p Page) (DefinitionPage, error) {
	var out DefinitionPage
	_, err := c.do(ctx, http.MethodGet, "/definitions?"+p.query(url.Values{}).Encode(), nil, &out)
	return out, err
}

// GetDefinition reads a definition with its versions.
func (c *Client) GetDefinition(ctx context.Context, key string) (DefinitionInfo, error) {
	var out DefinitionInfo
	_, err := c.do(ctx, http.MethodGet, "/definitions/"+url.PathEscape(key), nil, &out)
	return out, err
}

// GetVersion reads one version with its source and manifest.
func (c *Client) GetVersion(ctx context.Context, key string, version int) (VersionInfo, error) {
	var out VersionInfo
	_, err := c.do(ctx, http.MethodGet, versionPath(key, version), nil, &out)
	return out, err
}

// Unpublish unpublishes a version: its runs go on; new runs by key start
// the newest version still published.
func (c *Client) Unpublish(ctx context.Context, key string, version int) error {
	_, err := c.do(ctx, http.MethodDelete, versionPath(key, version), nil, nil)
	return err
}

func versionPath(key string, version int) string {
	return "/definitions/" + url.PathEscape(key) + "/versions/" + strconv.Itoa(version)
}

// RunFilter selects runs; zero fields do not filter.
type RunFilter struct {
	Status, Definition, Subject, ParentRunID string
	// Attributes match search attributes exactly (attr.NAME=VALUE).
	Attributes map[string]string
	Page
}

// RunPage is a page of runs, newest first.
type RunPage struct {
	Runs       []Run  `json:"runs"`
	NextCursor string `json:"next_cursor"`
}

// ListRuns lists runs, newest first, a page at a time.
func (c *Client) ListRuns(ctx context.Context, f RunFilter) (RunPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "definition": f.Definition, "subject": f.Subject, "parent_run_id": f.ParentRunID} {
		if v != "" {
			q.Set(k, v)
		}
	}
	for k, v := range f.Attributes {
		q.Set("attr."+k, v)
	}
	var out RunPage
	_, err := c.do(ctx, http.MethodGet, "/runs?"+f.query(q).Encode(), nil, &out)
	return out, err
}

// Transition is one change of a run's status or a node's state.
type Transition struct {
	Seq        int       `json:"seq"`
	At         time.Time `json:"at"`
	Node       string    `json:"node"`
	From       string    `json:"from"`
	To         string    `json:"to"`
	Generation int       `json:"generation"`
	Attempt    int       `json:"attempt"`
	Detail     string    `json:"detail"`
}

// RunHistory reads a run's transitions after seq after (0: from the
// start), oldest first, at most limit (0: the server's default).
func (c *Client) RunHistory(ctx context.Context, runID string, after, limit int) ([]Transition, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.Itoa(after))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out struct {
		Transitions []Transition `json:"transitions"`
	}
	_, err := c.do(ctx, http.MethodGet, runPath(runID)+"/history?"+q.Encode(), nil, &out)
	return out.Transitions, err
}

func runPath(id string) string { return "/runs/" + url.PathEscape(id) }

// CancelRun cancels a run and its sync children.
func (c *Client) CancelRun(ctx context.Context, runID, reason string) error {
	_, err := c.do(ctx, http.MethodPost, runPath(runID)+"/cancel", map[string]string{"reason": reason}, nil)
	return err
}

// RetryNode retries a failed node and what follows it, keeping the
// outputs upstream, and resumes the run.
func (c *Client) RetryNode(ctx context.Context, runID, node string) error {
	_, err := c.do(ctx, http.MethodPost, runPath(runID)+"/nodes/"+url.PathEscape(node)+"/retry", struct{}{}, nil)
	return err
}

// ContinueAsNew ends the run and starts its successor (with input, or
// the run's own when nil); the same requestID always names the same
// successor, whose id it returns.
func (c *Client) ContinueAsNew(ctx context.Context, runID, requestID string, input any) (string, error) {
	body := map[string]any{"request_id": requestID}
	if input != nil {
		body["input"] = input
	}
	var out struct {
		SuccessorRunID string `json:"successor_run_id"`
	}
	_, err := c.do(ctx, http.MethodPost, runPath(runID)+"/continue-as-new", body, &out)
	return out.SuccessorRunID, err
}

// ScatterChildren reads a page of a scatter node's children, filtered by
// state and by a key prefix q (both optional).
func (c *Client) ScatterChildren(ctx context.Context, runID, node, state, q string, p Page) (json.RawMessage, error) {
	v := url.Values{}
	if state != "" {
		v.Set("state", state)
	}
	if q != "" {
		v.Set("q", q)
	}
	var out json.RawMessage
	_, err := c.do(ctx, http.MethodGet, runPath(runID)+"/nodes/"+url.PathEscape(node)+"/children?"+p.query(v).Encode(), nil, &out)
	return out, err
}

// Approval is an approval a run waits for.
type Approval struct {
	ID           string          `json:"id"`
	RunID        string          `json:"run_id"`
	Node         string          `json:"node"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	Approvers    []string        `json:"approvers"`
	MinApprovals int             `json:"min_approvals"`
	Status       string          `json:"status"`
	ExpiresAt    *time.Time      `json:"expires_at"`
	CreatedAt    time.Time       `json:"created_at"`
	DecidedAt    *time.Time      `json:"decided_at"`
	Decisions    json.RawMessage `json:"decisions"`
}

// ListApprovals lists the tenant's approvals with the status (pending,
// approved, rejected, closed; "" for all).
func (c *Client) ListApprovals(ctx context.Context, status string, limit int) ([]Approval, error) {
	var out struct {
		Approvals []Approval `json:"approvals"`
	}
	_, err := c.do(ctx, http.MethodGet, "/approvals?"+statusQuery(status, limit), nil, &out)
	return out.Approvals, err
}

func statusQuery(status string, limit int) string {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q.Encode()
}

// GetApproval reads one approval with its decisions.
func (c *Client) GetApproval(ctx context.Context, id string) (Approval, error) {
	var out Approval
	_, err := c.do(ctx, http.MethodGet, "/approvals/"+url.PathEscape(id), nil, &out)
	return out, err
}

// DecideApproval approves or rejects as the key; a decided approval is
// an [APIError] with status 409.
func (c *Client) DecideApproval(ctx context.Context, id string, approve bool, comment string) (Approval, error) {
	decision := map[bool]string{true: "approve", false: "reject"}[approve]
	var out Approval
	_, err := c.do(ctx, http.MethodPost, "/approvals/"+url.PathEscape(id)+"/decision",
		map[string]string{"decision": decision, "comment": comment}, &out)
	return out, err
}

// Case is a human-loop case. In ListCases its Data is left out (see
// ListCasesWithData); GetCase has it whole.
type Case struct {
	ID             string          `json:"id"`
	RunID          string          `json:"run_id"`
	Node           string          `json:"node"`
	Title          string          `json:"title"`
	Assignees      []string        `json:"assignees"`
	Fields         json.RawMessage `json:"fields"`
	AwaitingStatus string          `json:"awaiting_status"`
	Status         string          `json:"status"`
	Data           json.RawMessage `json:"data"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	// Truncated names what a list asked for but left out for its size
	// ("data").
	Truncated []string `json:"truncated,omitempty"`
}

// ListCases lists the tenant's cases with the status ("" for all), as
// summaries: without their data.
func (c *Client) ListCases(ctx context.Context, status string, limit int) ([]Case, error) {
	return c.listCases(ctx, statusQuery(status, limit))
}

// ListCasesWithData lists the tenant's cases with their data, each up to
// 64 KiB: a larger one is left out and its Truncated says "data" (GetCase
// has it).
func (c *Client) ListCasesWithData(ctx context.Context, status string, limit int) ([]Case, error) {
	q := statusQuery(status, limit)
	if q != "" {
		q += "&"
	}
	return c.listCases(ctx, q+"include=data")
}

func (c *conn) listCases(ctx context.Context, query string) ([]Case, error) {
	var out struct {
		Cases []Case `json:"cases"`
	}
	_, err := c.do(ctx, http.MethodGet, "/cases?"+query, nil, &out)
	return out.Cases, err
}

// GetCase reads one case whole, with its data.
func (c *Client) GetCase(ctx context.Context, id string) (Case, error) {
	var out Case
	_, err := c.do(ctx, http.MethodGet, "/cases/"+url.PathEscape(id), nil, &out)
	return out, err
}

// CaseUpdate changes a case; empty fields stay as they are.
type CaseUpdate struct {
	Status string `json:"status,omitempty"`
	Data   any    `json:"data,omitempty"`
}

// UpdateCase sets a case's status and data; the awaited status resumes
// its run.
func (c *Client) UpdateCase(ctx context.Context, id string, u CaseUpdate) (Case, error) {
	if u.Status == "" && u.Data == nil {
		return Case{}, fmt.Errorf("ductor: a case update needs a status or data")
	}
	var out Case
	_, err := c.do(ctx, http.MethodPatch, "/cases/"+url.PathEscape(id), u, &out)
	return out, err
}

// DefinitionSchema reads the JSON Schema of definition documents.
func (c *Client) DefinitionSchema(ctx context.Context) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := c.do(ctx, http.MethodGet, "/schemas/definition.json", nil, &out)
	return out, err
}
