package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

func get(t *testing.T, h http.Handler, path, accept string) *http.Response {
	t.Helper()
	r := httptest.NewRequest("GET", path, nil)
	if accept != "" {
		r.Header.Set("Accept-Encoding", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func TestServe(t *testing.T) {
	root := t.TempDir()
	models := t.TempDir()
	wasm := bytes.Repeat([]byte("\x00asm\x01\x00\x00\x00 some code "), 500)
	model := bytes.Repeat([]byte("GGUF model bytes "), 300)
	for name, b := range map[string][]byte{
		"build/ui.wasm": wasm, "index.html": []byte("<!doctype html><title>x</title>" + strings.Repeat(" ", 2000)),
		".git/config": []byte("secret"), "small.js": []byte("export {}"),
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(models, "m.gguf"), model, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := handler(root, []string{"/test-models/=" + models})
	if err != nil {
		t.Fatal(err)
	}

	for _, enc := range []string{"br", "gzip", ""} {
		accept := map[string]string{"br": "gzip, deflate, br, zstd", "gzip": "gzip, deflate", "": ""}[enc]
		res := get(t, h, "/build/ui.wasm", accept)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/wasm" || res.Header.Get("Content-Encoding") != enc {
			t.Fatalf("%q: status %d, headers %v", accept, res.StatusCode, res.Header)
		}
		var body io.Reader = res.Body
		switch enc {
		case "br":
			body = brotli.NewReader(res.Body)
		case "gzip":
			if body, err = gzip.NewReader(res.Body); err != nil {
				t.Fatal(err)
			}
		}
		got, err := io.ReadAll(body)
		if err != nil || !bytes.Equal(got, wasm) {
			t.Errorf("%q: body differs (%d bytes, %v)", accept, len(got), err)
		}
		if res.Header.Get("Cross-Origin-Opener-Policy") != "same-origin" || res.Header.Get("Cross-Origin-Embedder-Policy") != "require-corp" {
			t.Errorf("%q: no cross-origin isolation headers: %v", accept, res.Header)
		}
	}
	if res := get(t, h, "/build/ui.wasm", "br;q=0, gzip"); res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("br;q=0 still got %q", res.Header.Get("Content-Encoding"))
	}

	// Models: never compressed, with their length, from the mount.
	res := get(t, h, "/test-models/m.gguf", "gzip, br")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || res.ContentLength != int64(len(model)) {
		t.Errorf("model: status %d, length %d, headers %v", res.StatusCode, res.ContentLength, res.Header)
	}
	for path, status := range map[string]int{"/": 200, "/.git/config": 404, "/nope.js": 404, "/test-models/gone.gguf": 404, "/small.js": 200} {
		if res := get(t, h, path, "br"); res.StatusCode != status {
			t.Errorf("%s: status %d, want %d", path, res.StatusCode, status)
		}
	}
	if res := get(t, h, "/small.js", "br"); res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("small.js: %v", res.Header)
	}
	if _, err := handler(root, []string{"models=" + models}); err == nil {
		t.Error("a bad -mount was accepted")
	}
}
