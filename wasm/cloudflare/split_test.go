//go:build !js

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/gguf/tools/split"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/server"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

func TestModelSources(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"https://x/m.gguf", []string{"https://x/m.gguf"}},
		{"https://x/m-00001-of-00001.gguf", []string{"https://x/m-00001-of-00001.gguf"}},
		{"https://x/m-00001-of-00002.gguf", []string{"https://x/m-00001-of-00002.gguf", "https://x/m-00002-of-00002.gguf"}},
		{"https://x/m-00001-of-00002.gguf?download=1", []string{"https://x/m-00001-of-00002.gguf?download=1", "https://x/m-00002-of-00002.gguf?download=1"}},
		{"models/m-00002-of-00003.gguf", []string{"models/m-00001-of-00003.gguf", "models/m-00002-of-00003.gguf", "models/m-00003-of-00003.gguf"}},
		{"odd?name-00001-of-00002.gguf", []string{"odd?name-00001-of-00002.gguf", "odd?name-00002-of-00002.gguf"}}, // an R2 key may hold '?'
	} {
		if got := modelSources(c.src); !reflect.DeepEqual(got, c.want) {
			t.Errorf("modelSources(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// splitDefault writes the embedded stories260K split into 3 shards (20
// tensors each, as `picolm split --split-max-tensors 20` does) in dir and
// returns their paths.
func splitDefault(t *testing.T, dir string) []string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := os.WriteFile(in, defaultmodel.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	paths, err := split.Split(in, filepath.Join(dir, "stories"), split.Options{MaxTensors: 20})
	if err != nil || len(paths) != 3 {
		t.Fatalf("split: %v %v", paths, err)
	}
	return paths
}

// TestServerFromShards: the handler over the shards of a split GGUF answers
// what it answers over the file; shards that are not a set are refused by
// name.
func TestServerFromShards(t *testing.T) {
	paths := splitDefault(t, t.TempDir())
	var bs [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	srv, err := newServer(bs, paths, readDefaults(t), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	want, body := greedyPair(t, loadNative(t), "Once upon a time", 24)
	if got := completion(t, http.DefaultClient, ts.URL, body); got != want {
		t.Errorf("from 3 shards: %q, want %q", got, want)
	}
	if _, err := newServer([][]byte{bs[0], bs[2]}, []string{paths[0], paths[2]}, readDefaults(t), time.Now()); err == nil || !strings.Contains(err.Error(), paths[1]+" (shard 2 of 3) is missing") {
		t.Errorf("a gap: %v", err)
	}
	if _, err := newServer([][]byte{bs[0], []byte("<html>")}, []string{paths[0], paths[1]}, readDefaults(t), time.Now()); err == nil || !strings.Contains(err.Error(), paths[1]) {
		t.Errorf("not GGUF: %v", err)
	}
}

func readDefaults(t *testing.T) server.Config {
	s, err := readSettings(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return s.cfg
}

// TestE2ESplit runs against the free-plan bundle on workerd with MODEL_URL
// the first shard of a split stories260K (scripts/test-workers.sh): with a
// shard missing the request gets a 500 naming it; with all three the Worker
// fetches them by name and answers what the engine generates natively.
func TestE2ESplit(t *testing.T) {
	dir := os.Getenv("PICOLM_WORKER_SPLIT_DIR")
	if dir == "" {
		t.Skip("PICOLM_WORKER_SPLIT_DIR not set: run scripts/test-workers.sh")
	}
	base, m, client := worker(t, "PICOLM_WORKER_URL")
	src := os.Getenv("PICOLM_WORKER_MODEL_SOURCE")
	staged := t.TempDir()
	paths := splitDefault(t, staged)
	put := func(i int) {
		b, err := os.ReadFile(paths[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(paths[i])), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if filepath.Base(paths[0]) != src[strings.LastIndex(src, "/")+1:] {
		t.Fatalf("MODEL_URL %s is not the first shard %s", src, paths[0])
	}
	put(0)
	put(2)
	want, body := greedyPair(t, m, "Once upon a time", 32)
	res, b := post(t, client, base+"/v1/completions", body)
	e, err := apitest.DecodeError(b)
	missing := strings.Replace(src, "00001-of", "00002-of", 1)
	if res.StatusCode != http.StatusInternalServerError || err != nil || !strings.Contains(e.Error.Message, "shard 2 of 3") ||
		!strings.Contains(e.Error.Message, missing) || !strings.Contains(e.Error.Message, "404") {
		t.Fatalf("shard 2 missing: got %d %s, want 500 naming %s and its 404", res.StatusCode, b, missing)
	}
	t.Logf("shard missing: %s", e.Error.Message)
	put(1)
	if got := completion(t, client, base, body); got != want {
		t.Fatalf("from 3 shards: %q, want %q", got, want)
	}
	if h := health(t, client, base); h.Model.Source != src {
		t.Errorf("model source %q, want %q", h.Model.Source, src)
	}
}
