// Command workers is picoLM as a Cloudflare Worker: an OpenAI-style
// completions and chat-completions API with server-sent-event streaming and
// a demo page, built with github.com/syumai/workers for GOOS=js and run on
// workerd (locally) or Cloudflare (wrangler deploy). Built natively it serves
// the same handler with net/http, for development.
//
// The HTTP API lives in internal/server (plain Go); this package only loads
// the model, reads the configuration (wrangler.toml [vars]) and bridges to
// the Workers runtime (bridge_js.go, glue/worker.mjs).
package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/cloudflare/internal/server"
)

// Settings are read from the Worker's environment ([vars] in wrangler.toml,
// text bindings in config.capnp; flags and environment variables natively).
//
//	MAX_TOKENS_CAP      max_tokens above this is clamped (default 256)
//	DEFAULT_MAX_TOKENS  max_tokens when a request has none (default 128)
//	CONTEXT             KV-cache positions per session (default 512)
//	SESSIONS            generations at once; more requests wait (default 4)
//	MAX_BODY_BYTES      request bodies over this get 413 (default 65536)
//	MODEL_ID            the name clients pass as "model" (default: the GGUF general.name)
//	MODEL_URL           fetch the GGUF from this URL instead of the embedded stories260K
//	MODEL_R2_BUCKET     name of an R2 binding to read the GGUF from (with MODEL_R2_KEY)
//	MODEL_R2_KEY        the object key in that bucket
//
// A split GGUF (llama.cpp's gguf-split) is given by its first shard's URL or
// key, NAME-00001-of-00003.gguf: the others are fetched by name beside it
// (modelSources), and MODEL_MAX_BYTES bounds them all together.
//
//	MODEL_MAX_BYTES     refuse a fetched model larger than this (default 80 MiB: a Worker has 128 MB)
//
// Two more are the glue's (glue/worker.mjs reads them; a bad value is
// answered to every request):
//
//	REQUEST_TIMEOUT_MS  a request unanswered after this gets a 504, its stream an error event (default 300000)
//	STALL_TIMEOUT_MS    an instance that made no progress for this long while a request waited
//	                    on it is replaced (default 60000)
type settings struct {
	cfg           server.Config
	modelURL      string
	r2Bucket      string
	r2Key         string
	modelMaxBytes int64
}

const defaultModelMaxBytes = 80 << 20

// errNoModel: a build without the embedded model (-tags nomodel, build.sh
// --free) and no MODEL_URL or R2 binding configured.
var errNoModel = errors.New("this build has no embedded model (build.sh --free, -tags nomodel): set MODEL_URL, or MODEL_R2_BUCKET and MODEL_R2_KEY")

// readSettings parses the settings with get (a missing variable is "").
func readSettings(get func(string) string) (settings, error) {
	var s settings
	ints := []struct {
		name string
		dst  *int
	}{
		{"MAX_TOKENS_CAP", &s.cfg.MaxTokensCap},
		{"DEFAULT_MAX_TOKENS", &s.cfg.DefaultMaxTokens},
		{"CONTEXT", &s.cfg.Context},
		{"SESSIONS", &s.cfg.Sessions},
	}
	for _, v := range ints {
		if err := parsePositive(get(v.name), v.name, func(n int64) { *v.dst = int(n) }); err != nil {
			return s, err
		}
	}
	if err := parsePositive(get("MAX_BODY_BYTES"), "MAX_BODY_BYTES", func(n int64) { s.cfg.MaxBodyBytes = n }); err != nil {
		return s, err
	}
	s.modelMaxBytes = defaultModelMaxBytes
	if err := parsePositive(get("MODEL_MAX_BYTES"), "MODEL_MAX_BYTES", func(n int64) { s.modelMaxBytes = n }); err != nil {
		return s, err
	}
	s.cfg.ModelID = get("MODEL_ID")
	s.modelURL = get("MODEL_URL")
	s.r2Bucket, s.r2Key = get("MODEL_R2_BUCKET"), get("MODEL_R2_KEY")
	if (s.r2Bucket == "") != (s.r2Key == "") {
		return s, fmt.Errorf("MODEL_R2_BUCKET and MODEL_R2_KEY go together")
	}
	if s.modelURL != "" && s.r2Bucket != "" {
		return s, fmt.Errorf("set MODEL_URL or MODEL_R2_BUCKET, not both")
	}
	switch {
	case s.modelURL != "":
		s.cfg.ModelSource = s.modelURL
	case s.r2Bucket != "":
		s.cfg.ModelSource = "r2:" + s.r2Bucket + "/" + s.r2Key
	default:
		s.cfg.ModelSource = "embedded"
	}
	return s, nil
}

func parsePositive(v, name string, set func(int64)) error {
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	set(n)
	return nil
}

// modelSources are the URLs (or R2 keys) of the files of the model at src:
// src, or when its name is a split GGUF's shard (NAME-0000k-of-0000N.gguf,
// N > 1; a query string after it is kept) the N shards' in order.
func modelSources(src string) []string {
	base, query := src, ""
	if i := strings.IndexAny(src, "?#"); i >= 0 && strings.Contains(src, "://") {
		base, query = src[:i], src[i:]
	}
	prefix, _, count, ok := gguf.ParseShardName(base)
	if !ok || count < 2 {
		return []string{src}
	}
	out := make([]string, count)
	for i := range out {
		out[i] = gguf.ShardName(prefix, i, count) + query
	}
	return out
}

// newServer parses and loads the GGUF in b (or the shards of a split GGUF
// in bs, named names) and returns the API server over it. since is when
// loading began, for the reported load time.
func newServer(bs [][]byte, names []string, cfg server.Config, since time.Time) (*server.Server, error) {
	files := make([]*gguf.File, len(bs))
	for i, b := range bs {
		f, err := gguf.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("parsing the model (%s): %w", names[i], err)
		}
		files[i] = f
	}
	f, err := gguf.Join(files, names)
	if err != nil {
		return nil, fmt.Errorf("loading the model: %w", err)
	}
	m, err := engine.Load(f)
	if err != nil {
		return nil, fmt.Errorf("loading the model: %w", err)
	}
	return server.New(m, cfg, time.Since(since))
}
