// Package server is the Worker's HTTP API in plain Go: an OpenAI-style
// completions and chat-completions endpoint (JSON or server-sent events), a
// demo page and a health document, over one loaded engine.Model and a small
// pool of sessions. It knows nothing about JavaScript: the Worker's bridge
// (wasm/cloudflare, GOOS=js) and the native dev server both serve it as an
// http.Handler, and its tests run natively with httptest.
//
// Routes:
//
//	GET  /                     demo page; the health JSON when the request's Accept names application/json
//	GET  /health               health JSON: model name and parameters, limits, instance counters and memory
//	GET  /v1/models            OpenAI model list (the one loaded model)
//	POST /v1/completions       OpenAI completions (prompt)
//	POST /v1/chat/completions  OpenAI chat completions (messages; tools, response_format json_schema, logprobs)
//	POST /v1/embeddings        OpenAI embeddings (input)
package server

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/grammar"
)

// Config is the server's limits and identity. Zero fields take the defaults
// below; Normalize reports the values in force.
type Config struct {
	ModelID          string // the id clients name in "model"; default: the GGUF general.name, else "picolm"
	Context          int    // KV-cache positions per session; default 512, capped at the model's trained context
	MaxTokensCap     int    // max_tokens above this is clamped to it; default 256
	DefaultMaxTokens int    // max_tokens when the request has none; default min(128, MaxTokensCap)
	MaxBodyBytes     int64  // larger request bodies get 413; default 64 KiB
	Sessions         int    // sessions (KV caches) generating at once; more requests wait; default 4
	MaxStops         int    // stop sequences per request; default 4 (OpenAI's limit)
	ModelSource      string // where the model came from, for the health document ("embedded", a URL, "r2:KEY")
}

// Defaults.
const (
	DefaultContext      = 512
	DefaultMaxTokensCap = 256
	DefaultMaxBodyBytes = 64 << 10
	DefaultSessions     = 4
	DefaultMaxStops     = 4
)

// Server serves the API. It is safe for concurrent use.
type Server struct {
	m    *engine.Model
	cfg  Config
	pool *sessionPool
	// grammars are the compiled grammars of recent schemas, grammars and
	// tool lists (format.go): the 16 most recently used, each of at most
	// 65,536 elements.
	grammars *grammar.Cache
	start    time.Time
	loaded   time.Duration

	seq      atomic.Uint64 // completion ids
	requests atomic.Uint64 // requests served by this instance
	active   atomic.Int64  // generations in flight
}

// New returns a server over m. loadTime is reported in the health document.
func New(m *engine.Model, cfg Config, loadTime time.Duration) (*Server, error) {
	if m == nil {
		return nil, errors.New("server: nil model")
	}
	cfg = normalize(m, cfg)
	s := &Server{m: m, cfg: cfg, start: time.Now(), loaded: loadTime, grammars: &grammar.Cache{Size: 16, MaxElems: 1 << 16}}
	s.pool = newSessionPool(m, engine.SessionOptions{Context: cfg.Context, Threads: 1}, cfg.Sessions)
	// One session up front: the first request then pays for nothing but
	// its own tokens, and a model too big for the context fails here.
	sess, err := s.pool.acquire(context.Background())
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s.cfg.Context = sess.Context()
	s.pool.release(sess)
	return s, nil
}

func normalize(m *engine.Model, c Config) Config {
	if c.ModelID == "" {
		c.ModelID = strings.TrimSpace(m.Config.Name)
	}
	if c.ModelID == "" {
		c.ModelID = "picolm"
	}
	if c.Context <= 0 {
		c.Context = DefaultContext
	}
	if c.Context > m.Config.TrainCtx && m.Config.TrainCtx > 0 {
		c.Context = m.Config.TrainCtx
	}
	if c.MaxTokensCap <= 0 {
		c.MaxTokensCap = DefaultMaxTokensCap
	}
	if c.DefaultMaxTokens <= 0 {
		c.DefaultMaxTokens = 128
	}
	c.DefaultMaxTokens = min(c.DefaultMaxTokens, c.MaxTokensCap)
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Sessions <= 0 {
		c.Sessions = DefaultSessions
	}
	if c.MaxStops <= 0 {
		c.MaxStops = DefaultMaxStops
	}
	if c.ModelSource == "" {
		c.ModelSource = "embedded"
	}
	return c
}

// Config returns the configuration in force (defaults filled in, the context
// as the session actually holds it).
func (s *Server) Config() Config { return s.cfg }

//go:embed index.html
var indexHTML []byte

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	switch r.URL.Path {
	case "/":
		if !allow(w, r, http.MethodGet, http.MethodHead) {
			return
		}
		if wantsJSON(r) {
			s.health(w)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(indexHTML)
	case "/health":
		if allow(w, r, http.MethodGet, http.MethodHead) {
			s.health(w)
		}
	case "/v1/models":
		if allow(w, r, http.MethodGet, http.MethodHead) {
			s.models(w)
		}
	case "/v1/completions":
		if allow(w, r, http.MethodPost) {
			s.complete(w, r, false)
		}
	case "/v1/chat/completions":
		if allow(w, r, http.MethodPost) {
			s.complete(w, r, true)
		}
	case "/v1/embeddings":
		if allow(w, r, http.MethodPost) {
			s.embeddings(w, r)
		}
	default:
		writeError(w, http.StatusNotFound, "invalid_request_error", "", "not_found",
			fmt.Sprintf("unknown path %q: try GET /, GET /health, GET /v1/models, POST /v1/completions, POST /v1/chat/completions or POST /v1/embeddings", r.URL.Path))
	}
}

// allow answers 405 with an Allow header unless r's method is one of methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "", "method_not_allowed",
		fmt.Sprintf("method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(methods, ", ")))
	return false
}

// wantsJSON reports whether the Accept header asks for application/json
// (and not text/html first, as a browser's does).
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		switch strings.ToLower(mt) {
		case "text/html":
			return false
		case "application/json":
			return true
		}
	}
	return false
}

// Health is the health document served at /health.
type Health struct {
	Status string      `json:"status"`
	Model  HealthModel `json:"model"`
	Limits struct {
		Context      int   `json:"context"`
		MaxTokensCap int   `json:"max_tokens_cap"`
		DefaultMax   int   `json:"default_max_tokens"`
		MaxBodyBytes int64 `json:"max_body_bytes"`
		Sessions     int   `json:"sessions"`
		MaxStops     int   `json:"max_stop_sequences"`
	} `json:"limits"`
	Instance struct {
		UptimeMS   int64  `json:"uptime_ms"`
		LoadMS     int64  `json:"model_load_ms"`
		Requests   uint64 `json:"requests"`
		Generating int64  `json:"generating"`
		IdleSess   int    `json:"idle_sessions"`
		Memory     Memory `json:"memory"`
	} `json:"instance"`
}

// Memory is the Go runtime's memory (runtime.MemStats), in bytes. In the
// Worker, Sys is about the WebAssembly memory the instance has grown to
// (which never shrinks), HeapAlloc what is live of it.
type Memory struct {
	HeapAlloc uint64 `json:"heap_alloc_bytes"` // live heap objects
	HeapSys   uint64 `json:"heap_sys_bytes"`   // heap obtained from the host
	Sys       uint64 `json:"sys_bytes"`        // everything obtained from the host
	NumGC     uint32 `json:"gc_cycles"`
}

// HealthModel describes the loaded model.
type HealthModel struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Arch         string `json:"arch"`
	Source       string `json:"source"`
	FileType     string `json:"file_type"`
	Dim          int    `json:"dim"`
	HiddenDim    int    `json:"hidden_dim"`
	Layers       int    `json:"layers"`
	Heads        int    `json:"heads"`
	KVHeads      int    `json:"kv_heads"`
	VocabSize    int    `json:"vocab_size"`
	TrainCtx     int    `json:"train_context"`
	ChatTemplate bool   `json:"chat_template"` // chat completions use the model's chat template (false: chat.Plain)
}

func (s *Server) health(w http.ResponseWriter) {
	c := s.m.Config
	var h Health
	h.Status = "ok"
	h.Model = HealthModel{
		ID: s.cfg.ModelID, Name: c.Name, Arch: c.Arch, Source: s.cfg.ModelSource, FileType: c.FileTypeStr,
		Dim: c.Dim, HiddenDim: c.HiddenDim, Layers: c.Layers, Heads: c.Heads, KVHeads: c.KVHeads,
		VocabSize: c.VocabSize, TrainCtx: c.TrainCtx, ChatTemplate: s.m.Chat().Family() != "",
	}
	h.Limits.Context = s.cfg.Context
	h.Limits.MaxTokensCap = s.cfg.MaxTokensCap
	h.Limits.DefaultMax = s.cfg.DefaultMaxTokens
	h.Limits.MaxBodyBytes = s.cfg.MaxBodyBytes
	h.Limits.Sessions = s.cfg.Sessions
	h.Limits.MaxStops = s.cfg.MaxStops
	h.Instance.UptimeMS = time.Since(s.start).Milliseconds()
	h.Instance.LoadMS = s.loaded.Milliseconds()
	h.Instance.Requests = s.requests.Load()
	h.Instance.Generating = s.active.Load()
	h.Instance.IdleSess = s.pool.idleCount()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.Instance.Memory = Memory{HeapAlloc: ms.HeapAlloc, HeapSys: ms.HeapSys, Sys: ms.Sys, NumGC: ms.NumGC}
	writeJSON(w, http.StatusOK, h)
}

func (s *Server) models(w http.ResponseWriter) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{s.cfg.ModelID, "model", s.start.Unix(), "picolm"}}})
}

// sessionPool hands out at most n sessions at once, reusing idle ones (their
// KV caches keep the last prompt, so a repeated prefix is not recomputed).
type sessionPool struct {
	m    *engine.Model
	opt  engine.SessionOptions
	sem  chan struct{} // one token per session in use
	mu   sync.Mutex
	idle []*engine.Session
}

func newSessionPool(m *engine.Model, opt engine.SessionOptions, n int) *sessionPool {
	return &sessionPool{m: m, opt: opt, sem: make(chan struct{}, n)}
}

func (p *sessionPool) acquire(ctx context.Context) (*engine.Session, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	s, err := p.m.NewSession(p.opt)
	if err != nil {
		<-p.sem
		return nil, err
	}
	return s, nil
}

func (p *sessionPool) release(s *engine.Session) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
	<-p.sem
}

func (p *sessionPool) idleCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
