//go:build !js

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/apitest"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/server"
)

// TestSoak sends the Worker on workerd mixed valid and hostile traffic for
// PICOLM_SOAK_SECONDS (scripts/test-workers.sh: 30 by default), from more
// clients at once than it has sessions, then stops. It fails on any answer
// that is not the one expected (status, a well-formed body, for greedy
// requests the engine's own text), on a transport error where an answer was
// due, and if the instance was replaced along the way (no request may take
// it down). The greedy texts must be the same before, during and after. It
// reports what it sent and got by kind, and the memory over time: workerd's
// RSS (/proc, PICOLM_WORKERD_PID) and the Go instance's (/health).
func TestSoak(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("PICOLM_SOAK_SECONDS"))
	if secs <= 0 {
		t.Skip("PICOLM_SOAK_SECONDS not set: run scripts/test-workers.sh")
	}
	base, m, client := worker(t, "PICOLM_WORKER_URL")
	pid := os.Getenv("PICOLM_WORKERD_PID")

	prompts := []string{"Once upon a time", "The little dog", "Lily and Tom", "The sun was hot"}
	want := map[string]string{}
	for _, p := range prompts {
		want[p] = greedy(t, m, p, 24)
	}
	checkGreedy := func(when string) {
		for _, p := range prompts {
			if got := completion(t, client, base, greedyBody(p, 24, false)); got != want[p] {
				t.Errorf("%s: %q gave %q, want %q", when, p, got, want[p])
			}
		}
	}
	checkGreedy("before")
	h0 := health(t, client, base)
	workers := 2*h0.Limits.Sessions + 2

	kinds := soakKinds(base, prompts, want)
	stats := make([]soakStat, len(kinds))
	var failures atomic.Int64
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 20 {
			t.Errorf(format, args...)
		}
	}

	// Memory and the instance, sampled every few seconds.
	var samples []soakSample
	var sampleMu sync.Mutex
	sample := func(at time.Duration) {
		h := health(t, client, base)
		s := soakSample{at: at, rss: rssOf(pid), h: h}
		sampleMu.Lock()
		samples = append(samples, s)
		sampleMu.Unlock()
	}
	t0 := time.Now()
	deadline := t0.Add(time.Duration(secs) * time.Second)
	sample(0)
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(max(time.Duration(secs)*time.Second/12, 2*time.Second))
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				sample(time.Since(t0))
			case <-stopSampling:
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 13))
			for time.Now().Before(deadline) {
				i := rng.IntN(len(kinds))
				t1 := time.Now()
				err := kinds[i].do(client, rng)
				stats[i].add(time.Since(t1), err)
				if err != nil {
					fail("%s: %v", kinds[i].name, err)
				}
			}
		}()
	}
	wg.Wait()
	close(stopSampling)
	<-sampled
	sample(time.Since(t0))
	checkGreedy("after")

	// The report.
	total, bad := 0, 0
	t.Logf("SOAK %d s, %d clients (SESSIONS=%d):", secs, workers, h0.Limits.Sessions)
	t.Logf("  %-28s %7s %7s %9s %9s", "kind", "sent", "wrong", "median", "max")
	for i, k := range kinds {
		s := &stats[i]
		total += s.n
		bad += s.bad
		t.Logf("  %-28s %7d %7d %9v %9v", k.name, s.n, s.bad, s.median().Round(time.Millisecond), s.max.Round(time.Millisecond))
	}
	t.Logf("  %-28s %7d %7d", "total", total, bad)
	t.Logf("  memory over time: %8s %12s %12s %12s %8s %9s", "at", "workerd RSS", "Go heap", "Go sys", "GC", "requests")
	for _, s := range samples {
		t.Logf("                    %8v %12s %12s %12s %8d %9d", s.at.Round(time.Second), mib(s.rss), mib(s.h.Instance.Memory.HeapAlloc),
			mib(s.h.Instance.Memory.Sys), s.h.Instance.Memory.NumGC, s.h.Instance.Requests)
	}

	// One instance all along: its request counter never went back, its
	// model was loaded once; and it stayed inside a Worker's 128 MB.
	for i, s := range samples {
		if s.h.Instance.LoadMS != h0.Instance.LoadMS || (i > 0 && s.h.Instance.Requests < samples[i-1].h.Instance.Requests) {
			t.Errorf("the instance was replaced during the soak: %+v after %+v", s.h.Instance, samples[max(i-1, 0)].h.Instance)
		}
		if s.h.Instance.Memory.Sys > 128<<20 {
			t.Errorf("at %v the Go instance holds %s, over a Worker's 128 MB", s.at, mib(s.h.Instance.Memory.Sys))
		}
	}
	if total < workers {
		t.Errorf("only %d requests in %d s", total, secs)
	}
}

type soakKind struct {
	name string
	do   func(c *http.Client, rng *rand.Rand) error // nil: the answer was the one expected
}

// soakKinds is the traffic: valid requests whose answers are known (the
// greedy texts), and hostile ones, each with the status it must get.
func soakKinds(base string, prompts []string, want map[string]string) []soakKind {
	// expect sends a request and checks the status and that the body is
	// well formed (apitest.Check).
	expect := func(method, path, ctype, body string, status int) func(*http.Client, *rand.Rand) error {
		return func(c *http.Client, _ *rand.Rand) error {
			_, err := send(c, base, method, path, ctype, body, status)
			return err
		}
	}
	const cmpl, chat, ct = "/v1/completions", "/v1/chat/completions", "application/json"
	nest := func(depth int, open, close, inner string) string {
		return `{"prompt":"Once","max_tokens":2,"a":` + strings.Repeat(open, depth) + inner + strings.Repeat(close, depth) + `}`
	}
	kinds := []soakKind{
		{"greedy completion", func(c *http.Client, rng *rand.Rand) error {
			p := prompts[rng.IntN(len(prompts))]
			b, err := send(c, base, "POST", cmpl, ct, greedyBody(p, 24, false), 200)
			if err != nil {
				return err
			}
			if cp, _ := apitest.DecodeCompletion(b); cp.Text() != want[p] {
				return fmt.Errorf("%q gave %q, want %q", p, cp.Text(), want[p])
			}
			return nil
		}},
		{"greedy stream", func(c *http.Client, rng *rand.Rand) error {
			p := prompts[rng.IntN(len(prompts))]
			b, err := send(c, base, "POST", cmpl, ct, greedyBody(p, 24, true), 200)
			if err != nil {
				return err
			}
			if st, _ := apitest.ParseSSE(b); st.Text != want[p] {
				return fmt.Errorf("%q streamed %q, want %q", p, st.Text, want[p])
			}
			return nil
		}},
		{"sampled chat stream", func(c *http.Client, rng *rand.Rand) error {
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":%d,"temperature":0.9,"seed":%d,"stream":true,"stream_options":{"include_usage":true}}`, 1+rng.IntN(64), rng.Int64())
			_, err := send(c, base, "POST", chat, ct, body, 200)
			return err
		}},
		{"json mode", expect("POST", chat, ct, `{"messages":[{"role":"user","content":"JSON"}],"max_tokens":32,"temperature":0.7,"response_format":{"type":"json_object"}}`, 200)},
		{"max_tokens capped", expect("POST", cmpl, ct, `{"prompt":"The end","max_tokens":1000000}`, 200)},
		{"json schema", func(c *http.Client, rng *rand.Rand) error {
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"data"}],"max_tokens":60,"temperature":1,"seed":%d,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":"string","maxLength":5}},"required":["n","s"]}}}}`, rng.Int64())
			b, err := send(c, base, "POST", chat, ct, body, 200)
			if err != nil {
				return err
			}
			if cmp, err := apitest.DecodeCompletion(b); err != nil || !json.Valid([]byte(cmp.Text())) {
				return fmt.Errorf("json_schema output is not JSON: %v %s", err, b)
			}
			return nil
		}},
		{"tool call stream", func(c *http.Client, rng *rand.Rand) error {
			body := fmt.Sprintf(`{"messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"w","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":6}},"required":["city"]}}}],"tool_choice":"required","parallel_tool_calls":false,"stream":true,"max_tokens":60,"temperature":1,"seed":%d,"logprobs":true,"top_logprobs":3}`, rng.Int64())
			_, err := send(c, base, "POST", chat, ct, body, 200)
			return err
		}},
		{"embeddings", expect("POST", "/v1/embeddings", ct, `{"input":["Once upon a time","The dog"],"encoding_format":"base64"}`, 200)},
		{"bad tool schema", expect("POST", chat, ct, `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","not":{}}}}]}`, 400)},
		{"health, models", func(c *http.Client, rng *rand.Rand) error {
			path := []string{"/health", "/v1/models", "/"}[rng.IntN(3)]
			_, err := send(c, base, "GET", path, "", "", 200)
			return err
		}},
		{"stream abandoned", func(c *http.Client, _ *rand.Rand) error { return abandon(c, base) }},
		{"upload cut off", func(_ *http.Client, _ *rand.Rand) error { return cutUpload(base) }},
		{"nested arrays 4500", expect("POST", cmpl, ct, nest(4500, "[", "]", ""), 400)},
		{"nested objects 5000", expect("POST", cmpl, ct, nest(5000, `{"a":`, "}", "1"), 400)},
		{"nested in messages", expect("POST", chat, ct, `{"messages":[{"role":"user","content":`+strings.Repeat("[", 60000)+`}]}`, 400)},
		{"body over 64 KB", expect("POST", cmpl, ct, `{"prompt":"`+strings.Repeat("a", 70000)+`"}`, 413)},
		{"malformed JSON", func(c *http.Client, rng *rand.Rand) error {
			good := `{"prompt":"Once upon a time","max_tokens":3,"stop":["x"]}`
			_, err := send(c, base, "POST", cmpl, ct, good[:rng.IntN(len(good)-1)], 400)
			return err
		}},
		{"unknown, unimplemented fields", func(c *http.Client, rng *rand.Rand) error {
			extra := []string{`"logprobs":5`, `"echo":true`, `"best_of":2`, `"suffix":"x"`, `"frequency_penalty":"x"`, `"temperature":1e309`, `"n":5`, `"Prompt":"x"`, `"max_tokens":-1`, `"seed":1.5`}[rng.IntN(10)]
			_, err := send(c, base, "POST", cmpl, ct, `{"prompt":"Once",`+extra+`}`, 400)
			return err
		}},
		{"prompt over the context", expect("POST", cmpl, ct, `{"prompt":"`+strings.Repeat("the dog ran ", 400)+`"}`, 400)},
		{"wrong content type", expect("POST", cmpl, "text/plain", `{"prompt":"Once"}`, 415)},
		{"wrong method, path", func(c *http.Client, rng *rand.Rand) error {
			if rng.IntN(2) == 0 {
				_, err := send(c, base, "DELETE", "/health", "", "", 405)
				return err
			}
			_, err := send(c, base, "GET", "/v1/"+strings.Repeat("x/", rng.IntN(500)), "", "", 404)
			return err
		}},
		{"binary body", func(c *http.Client, rng *rand.Rand) error {
			b := make([]byte, rng.IntN(4096))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			_, err := send(c, base, "POST", cmpl, ct, string(b), 400)
			return err
		}},
	}
	return kinds
}

// send makes a request and checks its status and that the answer is well
// formed; it returns the body.
func send(c *http.Client, base, method, path, ctype, body string, status int) ([]byte, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: reading the answer: %v", method, path, err)
	}
	if res.StatusCode != status {
		return b, fmt.Errorf("%s %s: %d %.200s, want %d", method, path, res.StatusCode, b, status)
	}
	if err := apitest.Check(method, path, res.StatusCode, res.Header, b); err != nil {
		return b, fmt.Errorf("%s %s: %v", method, path, err)
	}
	return b, nil
}

// abandon starts a long stream, reads its first event and goes away.
func abandon(c *http.Client, base string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/completions",
		strings.NewReader(`{"prompt":"Once upon a time","max_tokens":256,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("stream: %d", res.StatusCode)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		return fmt.Errorf("first event %q: %v", line, err)
	}
	return nil // cancel: the client goes away mid-stream
}

// cutUpload announces a body of 1000 bytes, sends 20 and hangs up.
func cutUpload(base string) error {
	u, _ := url.Parse(base)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"prompt\":\"Once upon", u.Host)
	return err
}

type soakStat struct {
	mu      sync.Mutex
	n, bad  int
	max     time.Duration
	elapsed []time.Duration
}

func (s *soakStat) add(d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if err != nil {
		s.bad++
	}
	s.max = max(s.max, d)
	s.elapsed = append(s.elapsed, d)
}

func (s *soakStat) median() time.Duration {
	if len(s.elapsed) == 0 {
		return 0
	}
	e := slices.Clone(s.elapsed)
	slices.Sort(e)
	return e[len(e)/2]
}

type soakSample struct {
	at  time.Duration
	rss uint64 // workerd's resident set, bytes (0: unknown)
	h   server.Health
}

// rssOf reads a process's resident set size from /proc (0 if it cannot).
func rssOf(pid string) uint64 {
	if pid == "" {
		return 0
	}
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
