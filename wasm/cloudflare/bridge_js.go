//go:build js && wasm

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
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

// bodyHeader carries the id under which the glue registered the request's
// response-body stream (made in the request's own context, see
// glue/worker.mjs). The handler never sees it.
const bodyHeader = "X-Picolm-Body"

// persist serves h writing to the body stream the glue made for the request
// (globalThis.picolmTakeBody). Without one (the stock syumai/workers glue)
// it serves h as it is. The request's context is cancelled when the glue's
// stream is: the reader went away, or the glue gave up on the request
// (REQUEST_TIMEOUT_MS); a request still waiting for a session then stops
// waiting. A panic in h is answered with a 500 instead of ending the Go
// program (see serve).
func persist(h http.Handler) http.Handler {
	take := js.Global().Get("picolmTakeBody")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(bodyHeader)
		r.Header.Del(bodyHeader)
		raw, ok := w.(rawResponse)
		if !ok || id == "" || take.Type() != js.TypeFunction {
			serve(h, w, r)
			return
		}
		body := take.Invoke(id)
		if body.Type() != js.TypeObject {
			// The glue gave up on the request before it got here (it timed
			// out, or its instance was replaced): nobody reads an answer.
			// Answering through syumai/workers' own body instead would end
			// the program when that body closes.
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		jw := &jsWriter{raw: raw, status: http.StatusOK, body: body, demand: make(chan struct{}, 1)}
		jw.onDemand = js.FuncOf(func(js.Value, []js.Value) any {
			if jw.body.Call("desired").Float() < 0 {
				cancel()
			}
			select {
			case jw.demand <- struct{}{}:
			default:
			}
			return nil
		})
		body.Call("setDemandHandler", jw.onDemand)
		defer jw.finish()
		serve(h, jw, r.WithContext(ctx))
	})
}

// serve runs h, and answers a panic in it as net/http does natively: logged
// with its stack, the request answered with a 500 (or its event stream
// ended with an error event) and the program going on. Under GOOS=js a
// panic that reaches the top of a goroutine ends the Go program, and with it
// every other request and the loaded model.
func serve(h http.Handler, w http.ResponseWriter, r *http.Request) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		fmt.Fprintf(os.Stderr, "picolm: panic serving %s %s: %v\n%s", r.Method, r.URL.Path, p, debug.Stack())
		msg, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("internal error: %v", p), "type": "server_error", "param": nil, "code": "internal_error",
		}})
		if jw, ok := w.(*jsWriter); ok && jw.started {
			if strings.HasPrefix(jw.Header().Get("Content-Type"), "text/event-stream") {
				w.Write([]byte("data: " + string(msg) + "\n\n"))
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Del("Content-Length")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(append(msg, '\n'))
	}()
	h.ServeHTTP(w, r)
}

type jsWriter struct {
	raw      rawResponse
	status   int
	started  bool
	body     js.Value // {stream, setDemandHandler(f), write(u8) bool, desired() number, close()}
	onDemand js.Func  // called by the stream's pull and cancel, in the request's context
	demand   chan struct{}
	closed   bool // cancelled by the reader
}

func (w *jsWriter) Header() http.Header { return w.raw.Header() }

func (w *jsWriter) WriteHeader(status int) {
	if !w.started {
		w.status = status
	}
}

// start hands the body stream to syumai/workers and lets it build the
// Response from the status and headers set so far.
func (w *jsWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.raw.Header().Del("Content-Length") // the body is a stream of unknown length
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
	for !w.closed {
		switch d := w.body.Call("desired").Float(); {
		case d < 0:
			w.closed = true
		case d > 0:
			return
		default:
			<-w.demand
		}
	}
}

// finish closes the stream; after close the glue no longer calls onDemand.
func (w *jsWriter) finish() {
	w.start()
	w.body.Call("close")
	w.onDemand.Release()
}
