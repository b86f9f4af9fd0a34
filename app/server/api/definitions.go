package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/ductor/ductor/app/server/httpx"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/ductor/ductor/app/apperr"
	"github.com/ductor/ductor/app/definition"
	"github.com/ductor/ductor/app/store"
)

// compiledJSON is the answer to compiling a document or saving a draft.
type compiledJSON struct {
	Key string `json:"key"`
	// Manifest is the manifest's canonical JSON, exactly what is hashed.
	Manifest     json.RawMessage `json:"manifest"`
	ManifestHash string          `json:"manifest_hash"`
}

// publishedJSON is the answer to publishing.
type publishedJSON struct {
	Key          string `json:"key"`
	Version      int    `json:"version"`
	ManifestHash string `json:"manifest_hash"`
}

func toCompiledJSON(c *definition.Compiled) compiledJSON {
	return compiledJSON{Key: c.Manifest.Key, Manifest: c.JSON, ManifestHash: c.Hash}
}

// handleCompile compiles a document without storing anything.
func handleCompile() echo.HandlerFunc {
	return func(c echo.Context) error {
		doc, f, err := readDocument(c)
		if err != nil {
			return err
		}
		compiled, err := compileDocument(doc, f)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, toCompiledJSON(compiled))
	}
}

// handleDraftSave saves a valid document as the definition's draft. An
// invalid one is answered like compile (422 with every problem) and the
// previous draft is kept.
func handleDraftSave(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		key := c.Param("key")
		doc, f, err := readKeyedDocument(c, key)
		if err != nil {
			return err
		}
		compiled, err := compileDocument(doc, f)
		if err != nil {
			return err
		}
		draft := store.Draft{Source: string(doc), Format: f.String(), Hash: compiled.Hash}
		if _, err := s.DefinitionDraftSave(c.Request().Context(), httpx.TenantOf(c), key, compiled.Manifest.Name, draft); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, toCompiledJSON(compiled))
	}
}

// handlePublish publishes the body's document, or the draft when the body
// is empty: 201 with a new version, 200 with the latest one when its
// manifest hash is the same.
func handlePublish(s *store.Store) echo.HandlerFunc {
	return func(c echo.Context) error {
		ctx, key := c.Request().Context(), c.Param("key")
		doc, f, err := readKeyedDocument(c, key)
		if err != nil {
			return err
		}
		if doc == nil {
			if doc, f, err = draftDocument(ctx, s, httpx.TenantOf(c), key); err != nil {
				return err
			}
		}
		compiled, err := compileDocument(doc, f)
		if err != nil {
			return err
		}
		v, created, err := s.DefinitionPublish(ctx, httpx.TenantOf(c), store.Publication{
			Manifest: compiled.Manifest, ManifestHash: compiled.Hash,
			Source: string(doc), SourceFormat: f.String(), Actor: actorOf(c),
		})
		if err != nil {
			return err
		}
		status := http.StatusCreated
		if !created {
			status = http.StatusOK
		}
		return c.JSON(status, publishedJSON{Key: v.Key, Version: v.Version, ManifestHash: v.ManifestHash})
	}
}

// readKeyedDocument reads the body's document with the URL's key; an
// empty body gives a nil document.
func readKeyedDocument(c echo.Context, key string) ([]byte, definition.Format, error) {
	doc, f, err := readDocument(c)
	if err != nil || len(bytes.TrimSpace(doc)) == 0 {
		return nil, f, err
	}
	doc, err = keyedDocument(doc, f, key)
	return doc, f, err
}

func draftDocument(ctx context.Context, s *store.Store, tenantID uuid.UUID, key string) ([]byte, definition.Format, error) {
	def, err := s.DefinitionGet(ctx, tenantID, key)
	if err != nil {
		return nil, 0, err
	}
	if def.Draft == nil {
		return nil, 0, apperr.New(apperr.NotFound, "definition %s has no draft to publish", key)
	}
	f := definition.FormatJSON
	if def.Draft.Format == definition.FormatYAML.String() {
		f = definition.FormatYAML
	}
	return []byte(def.Draft.Source), f, nil
}

// actorOf names the API key acting, for the audit log.
func actorOf(c echo.Context) string {
	p, _ := httpx.PrincipalOf(c)
	return store.ActorKey(p.Key)
}
