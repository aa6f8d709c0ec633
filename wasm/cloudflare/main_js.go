//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"syscall/js"
	"time"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
	"github.com/syumai/workers/cloudflare/fetch"
	"github.com/syumai/workers/cloudflare/r2"
)

// main runs once per isolate: glue/worker.mjs instantiates the module on the
// first request and keeps the instance, so the model loaded here serves
// every later request. main then parks; the handlers run on JS callbacks.
//
// A model from MODEL_URL or R2 is fetched here, before workers.Ready: the
// glue holds every other request until then, so the fetch and the reads of
// its body run in the first request's context only. If fetching fails the
// program exits with the reason (globalThis.picolmStartError) and the glue
// starts a new instance, and fetches again, on the next request; a
// configuration error instead is answered to every request.
func main() {
	t0 := time.Now()
	h, err := setup(t0)
	var fe *fetchError
	if errors.As(err, &fe) {
		js.Global().Set("picolmStartError", err.Error())
		os.Exit(1)
	}
	if err != nil {
		// Answer every request with the reason rather than failing to start.
		msg := err.Error()
		h = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "{\"error\":{\"message\":%q,\"type\":\"server_error\",\"param\":null,\"code\":\"model_unavailable\"}}\n", msg)
		})
	}
	workers.ServeNonBlock(persist(withFaults(h)))
	workers.Ready()
	select {}
}

// fetchError is a failure to get the model's bytes (network, status, R2):
// worth another try on the next request, unlike a bad setting or model.
type fetchError struct{ err error }

func (e *fetchError) Error() string { return e.err.Error() }
func (e *fetchError) Unwrap() error { return e.err }

func setup(t0 time.Time) (http.Handler, error) {
	s, err := readSettings(getenv)
	if err != nil {
		return nil, err
	}
	var bs [][]byte
	var names []string
	if s.modelURL == "" && s.r2Bucket == "" {
		b := embeddedModel()
		if b == nil {
			return nil, errNoModel
		}
		return newServer([][]byte{b}, []string{"embedded"}, s.cfg, t0)
	}
	// One file, or every shard of a split GGUF, within MODEL_MAX_BYTES in all.
	src := s.modelURL
	if src == "" {
		src = s.r2Key
	}
	names = modelSources(src)
	left := s.modelMaxBytes
	for i, name := range names {
		var b []byte
		if s.modelURL != "" {
			b, err = fetchModel(name, left)
		} else {
			b, err = r2Model(s.r2Bucket, name, left)
		}
		if err != nil && len(names) > 1 {
			err = fmt.Errorf("shard %d of %d of the split model %s: %w", i+1, len(names), names[0], err)
		}
		if err != nil {
			return nil, &fetchError{err}
		}
		bs = append(bs, b)
		left -= int64(len(b))
	}
	return newServer(bs, names, s.cfg, t0)
}

// getenv reads a text binding; a missing one, or one of another type (a
// workerd fromEnvironment binding of an unset variable is null), is "".
func getenv(name string) string {
	if v := cloudflare.GetBinding(name); v.Type() == js.TypeString {
		return v.String()
	}
	return ""
}

func fetchModel(url string, limit int64) ([]byte, error) {
	req, err := fetch.NewRequest(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("MODEL_URL: %w", err)
	}
	res, err := fetch.NewClient().Do(req, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", url, res.Status)
	}
	return readLimited(res.Body, res.ContentLength, limit, url)
}

func r2Model(bucket, key string, limit int64) ([]byte, error) {
	bk, err := r2.NewBucket(bucket)
	if err != nil {
		return nil, fmt.Errorf("R2 binding %s: %w", bucket, err)
	}
	obj, err := bk.Get(key)
	if err != nil {
		return nil, fmt.Errorf("R2 %s/%s: %w", bucket, key, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("R2 %s/%s: no such object", bucket, key)
	}
	return readLimited(obj.Body, int64(obj.Size), limit, "r2:"+bucket+"/"+key)
}

// readLimited reads a model of the announced size (-1: unknown), refusing
// one over limit before reading it.
func readLimited(r io.Reader, size, limit int64, what string) ([]byte, error) {
	if size > limit {
		return nil, fmt.Errorf("%s is %d bytes, over MODEL_MAX_BYTES=%d (a Worker has 128 MB of memory)", what, size, limit)
	}
	if size > 0 {
		// Known size: one allocation, no doubling copies.
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is over MODEL_MAX_BYTES=%d (a Worker has 128 MB of memory)", what, limit)
	}
	return b, nil
}
