//go:build !js

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
)

// lastEvent reads an event stream to its end and returns its last data
// line ("" if it had none, or the transport error).
func lastEvent(c *http.Client, url string) string {
	res, err := c.Get(url)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	last := ""
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
			last = string(data)
		}
	}
	if err := sc.Err(); err != nil {
		return err.Error()
	}
	return last
}

// TestE2EFaults runs against the bundle of `build.sh --faults` on workerd
// (config-faults.capnp: STALL_TIMEOUT_MS 2000, REQUEST_TIMEOUT_MS 4000;
// scripts/test-workers.sh sets PICOLM_WORKER_FAULTS_URL). Its /_fault/
// routes (faults_js.go) take the Go instance down each way the glue must
// survive: the request that did it gets a 500 OpenAI error saying why, a
// stream in flight ends with an error event instead of hanging, and the
// next request is served, by a fresh instance, with the same greedy text.
// Before the glue and bridge knew how, the first two left every later
// request with "Go program has already exited" and the third hung.
func TestE2EFaults(t *testing.T) {
	base, m, client := worker(t, "PICOLM_WORKER_FAULTS_URL")
	want, body := greedyPair(t, m, "Once upon a time", 16)
	if got := completion(t, client, base, body); got != want {
		t.Fatalf("before: %q, want %q", got, want)
	}

	for _, tc := range []struct {
		fault, says string
		inFlight    bool // a never-ending stream is in flight when the instance goes
	}{
		{"exit", "the Go program exited (code 3)", true},
		{"stack", "Maximum call stack size exceeded", true},
		{"hang", "no progress for 2000 ms", false}, // a stream in flight is progress: no stall while it runs
	} {
		t.Run(tc.fault, func(t *testing.T) {
			var drip chan string
			if tc.inFlight {
				drip = make(chan string, 1)
				go func() { drip <- lastEvent(client, base+"/_fault/drip") }()
				time.Sleep(500 * time.Millisecond) // the stream is under way
			}
			t0 := time.Now()
			res, b := get(t, client, base+"/_fault/"+tc.fault, "")
			e, err := apitest.DecodeError(b)
			if res.StatusCode != 500 || err != nil || e.Code() != "instance_stopped" || !strings.Contains(e.Error.Message, tc.says) {
				t.Fatalf("%d %s: want a 500 instance_stopped error saying %q", res.StatusCode, b, tc.says)
			}
			t.Logf("answered in %v: %s", time.Since(t0).Round(time.Millisecond), e.Error.Message)
			if drip != nil {
				if ev := <-drip; !strings.Contains(ev, "instance_stopped") || !strings.Contains(ev, tc.says) {
					t.Errorf("the stream in flight ended with %q, want an instance_stopped error event", ev)
				}
			}
			// A fresh instance: /health is its first request.
			h := health(t, client, base)
			if h.Status != "ok" || h.Instance.Requests != 1 {
				t.Errorf("after %s: health %+v, want a fresh instance", tc.fault, h.Instance)
			}
			if got := completion(t, client, base, body); got != want {
				t.Errorf("after %s: %q, want %q", tc.fault, got, want)
			}
		})
	}

	// A panic in a handler is answered with a 500 by the bridge; the
	// instance lives on.
	t.Run("panic", func(t *testing.T) {
		before := health(t, client, base)
		res, b := get(t, client, base+"/_fault/panic", "")
		e, err := apitest.DecodeError(b)
		if res.StatusCode != 500 || err != nil || e.Code() != "internal_error" || !strings.Contains(e.Error.Message, "fault injected") {
			t.Fatalf("%d %s: want a 500 internal_error", res.StatusCode, b)
		}
		// The fault routes are outside the server: only /health counts.
		if after := health(t, client, base); after.Instance.Requests != before.Instance.Requests+1 || after.Instance.LoadMS != before.Instance.LoadMS {
			t.Errorf("not the same instance: before %+v, after %+v", before.Instance, after.Instance)
		}
	})

	// A request past REQUEST_TIMEOUT_MS (a stream that never ends) is ended
	// with an error event; the Go side sees it cancelled and stops; the
	// instance lives on.
	t.Run("timeout", func(t *testing.T) {
		before := health(t, client, base)
		t0 := time.Now()
		ev := lastEvent(client, base+"/_fault/drip")
		if !strings.Contains(ev, `"code":"timeout"`) || !strings.Contains(ev, "REQUEST_TIMEOUT_MS (4000 ms)") {
			t.Errorf("the stream ended with %q, want a timeout error event", ev)
		}
		// workerd's clock moves only at I/O (a Spectre mitigation), so its
		// 4000 ms timer can end the stream a little before 4 s of wall time.
		if d := time.Since(t0); d < 3500*time.Millisecond || d > 30*time.Second {
			t.Errorf("ended after %v, want about REQUEST_TIMEOUT_MS", d)
		}
		after := health(t, client, base)
		if after.Instance.Requests != before.Instance.Requests+1 || after.Instance.Generating != 0 {
			t.Errorf("not the same instance, or still busy: before %+v, after %+v", before.Instance, after.Instance)
		}
		if got := completion(t, client, base, body); got != want {
			t.Errorf("after the timeout: %q, want %q", got, want)
		}
	})
}

// A body that is still arriving after REQUEST_TIMEOUT_MS (a trickle, or a
// client that announced more than it sends) gets a 408.
func TestE2ESlowUpload(t *testing.T) {
	base := os.Getenv("PICOLM_WORKER_FAULTS_URL")
	if base == "" {
		t.Skip("PICOLM_WORKER_FAULTS_URL not set: run scripts/test-workers.sh")
	}
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t0 := time.Now()
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\":", u.Host)
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(t0), err)
	}
	b, _ := io.ReadAll(res.Body)
	e, err := apitest.DecodeError(b)
	if res.StatusCode != http.StatusRequestTimeout || err != nil || e.Code() != "timeout" {
		t.Errorf("%d %s: want a 408 timeout error", res.StatusCode, b)
	}
	if d := time.Since(t0); d < 4*time.Second {
		t.Errorf("answered after %v, before REQUEST_TIMEOUT_MS", d)
	}
}
