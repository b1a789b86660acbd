package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed static templates
var embedded embed.FS

// asset is one static file, fingerprinted by its content and gzipped once at start.
type asset struct {
	name, url, ctype string
	raw, gz          []byte
}

// assets are the static files by fingerprinted URL, and the URL of each by name.
type assets struct {
	byURL  map[string]*asset
	byName map[string]*asset
}

func loadAssets() (*assets, error) {
	a := &assets{byURL: map[string]*asset{}, byName: map[string]*asset{}}
	err := fs.WalkDir(embedded, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".md") {
			return err
		}
		raw, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		sum := sha256.Sum256(raw)
		ext := path.Ext(name)
		as := &asset{name: name, raw: raw, ctype: mime.TypeByExtension(ext),
			url: "/static/" + strings.TrimSuffix(name, ext) + "." + hex.EncodeToString(sum[:5]) + ext}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(raw)
		zw.Close()
		if buf.Len() < len(raw) {
			as.gz = buf.Bytes()
		}
		a.byURL[as.url], a.byName[name] = as, as
		return nil
	})
	return a, err
}

// URL returns the fingerprinted URL of a static file ("app.css" → "/static/app.1a2b3c4d5e.css").
func (a *assets) URL(name string) string {
	if as, ok := a.byName[name]; ok {
		return as.url
	}
	return "/static/missing/" + name
}

// ServeHTTP serves a fingerprinted file for a year (its URL changes with its content), gzipped
// when the client accepts it.
func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	as, ok := a.byURL[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", as.ctype)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Vary", "Accept-Encoding")
	body := as.raw
	if as.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = as.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.TrimSpace(q) != "q=0" {
			return true
		}
	}
	return false
}
