package api

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// DefinitionJSON is a definition as the API lists it. LatestVersion is
// the newest version still published (what a run by key starts), null
// when none is.
type DefinitionJSON struct {
	Key           string     `json:"key"`
	Name          string     `json:"name"`
	LatestVersion *int       `json:"latest_version"`
	HasDraft      bool       `json:"has_draft"`
	Draft         *DraftJSON `json:"draft,omitempty"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// DefinitionDetailJSON is one definition with its versions, newest first.
type DefinitionDetailJSON struct {
	DefinitionJSON
	Versions []VersionJSON `json:"versions"`
	// EventTriggers are the newest published version's, with the runs
	// each started and its last error.
	EventTriggers []store.EventTrigger `json:"event_triggers"`
}

// DraftJSON is a definition's draft; Source is left out of lists.
type DraftJSON struct {
	Source       string    `json:"source,omitempty"`
	Format       string    `json:"format"`
	ManifestHash string    `json:"manifest_hash"`
	SavedAt      time.Time `json:"saved_at"`
}

// VersionJSON is a version; Manifest and Source only when one version is
// asked for.
type VersionJSON struct {
	Key           string               `json:"key,omitempty"`
	Version       int                  `json:"version"`
	ManifestHash  string               `json:"manifest_hash"`
	Format        string               `json:"format"`
	Published     bool                 `json:"published"`
	PublishedAt   time.Time            `json:"published_at"`
	UnpublishedAt *time.Time           `json:"unpublished_at"`
	Manifest      *definition.Manifest `json:"manifest,omitempty"`
	Source        string               `json:"source,omitempty"`
}

func definitionJSON(d store.Definition) DefinitionJSON {
	out := DefinitionJSON{Key: d.Key, Name: d.Name, HasDraft: d.Draft != nil, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
	if d.PublishedVersion > 0 {
		out.LatestVersion = &d.PublishedVersion
	}
	if d.Draft != nil {
		out.Draft = &DraftJSON{Source: d.Draft.Source, Format: d.Draft.Format, ManifestHash: d.Draft.Hash, SavedAt: d.Draft.SavedAt}
	}
	return out
}

func versionJSON(v store.DefinitionVersion) VersionJSON {
	return VersionJSON{
		Key: v.Key, Version: v.Version, ManifestHash: v.ManifestHash, Format: v.SourceFormat,
		Published: v.UnpublishedAt == nil, PublishedAt: v.PublishedAt, UnpublishedAt: v.UnpublishedAt,
		Manifest: v.Manifest, Source: v.Source,
	}
}

// handleDefinitionList lists the tenant's definitions by key, paged by an
// opaque cursor.
func handleDefinitionList(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		defs, resp, err := httpx.KeyedPage(c, func(after string, n int) ([]store.Definition, error) {
			return s.DefinitionList(c.Request().Context(), httpx.TenantOf(c), after, n)
		}, func(d store.Definition) string { return d.Key })
		if err != nil {
			return err
		}
		out := make([]DefinitionJSON, len(defs))
		for i, d := range defs {
			out[i] = definitionJSON(d)
		}
		resp["definitions"] = out
		return c.JSON(http.StatusOK, resp)
	}
}

// handleDefinitionGet shows a definition with its draft and its versions,
// newest first.
func handleDefinitionGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, tenantID, key := c.Request().Context(), httpx.TenantOf(c), c.Param("key")
		d, err := s.DefinitionGet(ctx, tenantID, key)
		if err != nil {
			return err
		}
		versions, err := s.DefinitionVersionList(ctx, tenantID, key)
		if err != nil {
			return err
		}
		triggers, err := s.EventTriggersOf(ctx, tenantID, key)
		if err != nil {
			return err
		}
		out := DefinitionDetailJSON{DefinitionJSON: definitionJSON(d), Versions: make([]VersionJSON, len(versions)), EventTriggers: triggers}
		for i, v := range versions {
			out.Versions[i] = VersionJSON{
				Version: v.Version, ManifestHash: v.ManifestHash, Format: v.SourceFormat,
				Published: v.UnpublishedAt == nil, PublishedAt: v.PublishedAt, UnpublishedAt: v.UnpublishedAt,
			}
		}
		return c.JSON(http.StatusOK, out)
	}
}

// handleVersionGet shows one version with its manifest and source.
func handleVersionGet(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		n, err := pathVersion(c)
		if err != nil {
			return err
		}
		v, err := s.DefinitionVersionGet(c.Request().Context(), httpx.TenantOf(c), c.Param("key"), n)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, versionJSON(v))
	}
}

// handleVersionUnpublish unpublishes a version: runs on it keep going, new
// runs by key start the newest version still published. Unpublishing it
// again answers the same.
func handleVersionUnpublish(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		n, err := pathVersion(c)
		if err != nil {
			return err
		}
		v, _, err := s.DefinitionVersionUnpublish(c.Request().Context(), httpx.TenantOf(c), c.Param("key"), n, actorOf(c))
		if err != nil {
			return err
		}
		out := versionJSON(v)
		out.Manifest, out.Source = nil, ""
		return c.JSON(http.StatusOK, out)
	}
}

// pathVersion parses the version number; a malformed one is not found.
func pathVersion(c echo.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("n"))
	if err != nil || n < 1 || n > math.MaxInt32 {
		return 0, apperr.New(apperr.NotFound, "definition %s version %s not found", c.Param("key"), c.Param("n"))
	}
	return n, nil
}
