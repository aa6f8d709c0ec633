//go:build js && wasm && picolmfaults

package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

// withFaults adds the routes the fault tests (TestE2EFaults, on the bundle
// build.sh --faults makes) use to take the Go instance down in each way the
// glue must survive. Only that bundle has them.
//
//	/_fault/exit   the Go program exits (code 3)
//	/_fault/stack  a recursion as deep as issue 13's 4,500 nested arrays made
//	               encoding/json's: the JS engine's stack overflows inside
//	               the WebAssembly, and the Go runtime is left unusable
//	/_fault/hang   the handler blocks forever: no progress (STALL_TIMEOUT_MS)
//	/_fault/panic  the handler panics: the bridge answers 500, the instance lives
//	/_fault/drip   an event stream that never ends, one comment every 100 ms:
//	               progress, but past REQUEST_TIMEOUT_MS; the instance lives
func withFaults(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/_fault/exit":
			os.Exit(3)
		case "/_fault/stack":
			fmt.Fprintln(w, deep(1<<22)) // never gets here
		case "/_fault/hang":
			select {}
		case "/_fault/panic":
			panic("a fault injected by /_fault/panic")
		case "/_fault/drip":
			w.Header().Set("Content-Type", "text/event-stream")
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte(": drip\n\n")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond)
			}
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// deep recurses n levels (not a tail call: the sum needs every frame).
func deep(n int) int {
	if n == 0 {
		return 0
	}
	return deep(n-1) + n&1
}
