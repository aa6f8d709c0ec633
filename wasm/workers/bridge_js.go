//go:build js && wasm

package main

import (
	"errors"
	"net/http"
	"syscall/js"
)

// The bridge between syumai/workers and a Go instance that outlives its
// requests.
//
// syumai/workers turns each JS Request into an *http.Request and answers
// with the body an io.Pipe carries; its generated glue starts a new wasm
// instance per request and the pipe's Close ends the Go program. Our glue
// (glue/worker.mjs) keeps one instance per isolate instead, so the body must
// not go through that pipe (its Close would end the program after the first
// response). persist gives the handler a ResponseWriter whose body is a JS
// ReadableStream it feeds directly, handed to syumai/workers as the raw JS
// body. Flush waits until the stream's reader has taken every chunk: the
// goroutine blocks, the Go scheduler returns to the JS event loop, workerd
// writes the chunk to the socket and pulls again. That is what makes a
// streamed token leave the Worker before the next one is computed, and what
// lets concurrent generations take turns token by token.

// rawResponse is what syumai/workers' ResponseWriter (v0.32) offers beside
// http.ResponseWriter: a raw JS body, and Ready, which makes it build the JS
// Response from the status and headers set so far.
type rawResponse interface {
	http.ResponseWriter
	WriteRawJSBody(body js.Value)
	Ready()
}

var errClosed = errors.New("response stream closed by the client")

// persist serves h with the body stream made by the glue's
// globalThis.picolmNewBody (see glue/worker.mjs). Without that helper (the
// stock syumai/workers glue) it serves h as it is.
func persist(h http.Handler) http.Handler {
	newBody := js.Global().Get("picolmNewBody")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, ok := w.(rawResponse)
		if !ok || newBody.Type() != js.TypeFunction {
			h.ServeHTTP(w, r)
			return
		}
		jw := &jsWriter{raw: raw, status: http.StatusOK, newBody: newBody}
		defer jw.finish()
		h.ServeHTTP(jw, r)
	})
}

type jsWriter struct {
	raw     rawResponse
	newBody js.Value
	status  int
	started bool
	body    js.Value // {stream, write(u8) bool, close(), drained() Promise<bool>}
	closed  bool     // cancelled by the reader
}

func (w *jsWriter) Header() http.Header { return w.raw.Header() }

func (w *jsWriter) WriteHeader(status int) {
	if !w.started {
		w.status = status
	}
}

// start creates the body stream and lets syumai/workers build the Response.
func (w *jsWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.raw.Header().Del("Content-Length") // the body is a stream of unknown length
	w.body = w.newBody.Invoke()
	w.raw.WriteRawJSBody(w.body.Get("stream"))
	w.raw.WriteHeader(w.status)
	w.raw.Ready()
}

func (w *jsWriter) Write(p []byte) (int, error) {
	w.start()
	if w.closed {
		return 0, errClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	a := js.Global().Get("Uint8Array").New(len(p))
	js.CopyBytesToJS(a, p)
	if !w.body.Call("write", a).Bool() {
		w.closed = true
		return 0, errClosed
	}
	return len(p), nil
}

// Flush waits until the reader has taken everything written so far.
func (w *jsWriter) Flush() {
	w.start()
	if !w.closed && !await(w.body.Call("drained")).Bool() {
		w.closed = true
	}
}

func (w *jsWriter) finish() {
	w.start()
	if !w.closed {
		w.body.Call("close")
	}
}

// await blocks the goroutine until the promise p (which never rejects)
// settles; meanwhile the Go scheduler runs other goroutines or returns to JS.
func await(p js.Value) js.Value {
	ch := make(chan js.Value, 1)
	var f js.Func
	f = js.FuncOf(func(_ js.Value, args []js.Value) any {
		f.Release()
		ch <- args[0]
		return nil
	})
	p.Call("then", f)
	return <-ch
}
