// Package static serves Ductor's stylesheets and scripts from the binary,
// under content-hashed URLs (app.3f2a9c1b.css) that can be cached forever.
package static

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// Prefix is where the files are served.
const Prefix = "/static/"

//go:embed css js img
var files embed.FS

type asset struct {
	name string // original path, e.g. css/app.css
	body []byte
}

var (
	hashed = map[string]asset{}  // hashed path → asset
	byName = map[string]string{} // original path → hashed path
)

func init() {
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ext := path.Ext(p)
		h := strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:4]) + ext
		hashed[h] = asset{name: p, body: body}
		byName[p] = h
		return nil
	})
}

// Path returns the content-hashed URL of a file such as "css/app.css".
// It panics on an unknown name: a template naming a missing file is a bug.
func Path(name string) string {
	h, ok := byName[name]
	if !ok {
		panic("static: no file " + name)
	}
	return Prefix + h
}

// Handler serves the hashed files with long-lived cache headers.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := hashed[strings.TrimPrefix(r.URL.Path, Prefix)]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(a.name)))
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		http.ServeContent(w, r, a.name, time.Time{}, bytes.NewReader(a.body))
	})
}

// ImportMap is a JSON import map from every script's plain URL to its
// hashed one, so ES modules can import each other by relative path.
func ImportMap() string {
	imports := map[string]string{}
	for name, h := range byName {
		if path.Ext(name) == ".js" {
			imports[Prefix+name] = Prefix + h
		}
	}
	b, _ := json.Marshal(map[string]any{"imports": imports})
	return string(b)
}

// ImportMapHash is the CSP source ('sha256-…') that allows the inline
// import map ImportMap returns, and no other inline script.
func ImportMapHash() string {
	sum := sha256.Sum256([]byte(ImportMap()))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}
