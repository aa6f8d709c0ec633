// Package host is the browser worker's engine host in plain Go: it owns
// the model bytes, the loaded model and one session, and turns the page's
// requests (load, generate, stop, unload) into engine calls and replies. The
// syscall/js bridge in the parent directory only converts messages; all the
// state and every decision live here, so they are tested natively.
//
// Loading streams the file into one Go []byte exactly once: Begin allocates
// it (refusing sizes over MaxModelBytes before any byte is copied), the
// bridge copies chunks into the slices Next hands out, and Finish parses the
// GGUF in place (tensors stay views into the buffer).
package host

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/sample"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

// MaxModelBytes is the largest model file the worker accepts. Go's js/wasm
// heap lives in one wasm32 linear memory of at most 4 GiB; measured under
// Node, a single 3.8 GB []byte still allocates. The rest is kept for the KV
// cache (at most engine.DefaultMaxKVBytes), activations and the runtime.
const MaxModelBytes = 3<<30 + 128<<20 // 3.125 GiB

// DefaultContext is the KV cache length a session asks for (capped by the
// model's trained context).
const DefaultContext = 2048

// Errors the worker reports; wrapped with detail.
var (
	ErrTooLarge  = errors.New("model too large for the browser engine")
	ErrNoModel   = errors.New("no model loaded")
	ErrLoading   = errors.New("load protocol error")
	ErrBusy      = errors.New("a generation is already running")
	ErrBadParams = errors.New("bad generation parameters")
)

// ModelInfo describes the loaded model to the page.
type ModelInfo struct {
	Name         string // file or general.name
	Arch         string
	Bytes        int64 // file size
	Params       int64 // approximate parameter count (dim, layers, vocab)
	Dim          int
	Layers       int
	Heads        int
	KVHeads      int // the most Workers the attention divides over (engine.MaxParts)
	VocabSize    int
	TrainCtx     int
	Context      int    // KV cache positions of the session
	FileType     string // weight types present
	ChatTemplate string // the chat template's family (chat.Formatter.Family; "" = the plain transcript)
	BuiltIn      bool
	Workers      int // instances the model is split over (1: whole)
}

// GenerateRequest is one generation the page asks for. Exactly one of Prompt
// and Messages is used: Messages when non-empty.
type GenerateRequest struct {
	Prompt      string
	Messages    []chat.Message
	MaxTokens   int
	Temperature float32
	TopP        float32
	TopK        int
	Seed        uint64
	JSON        bool
}

// Token is the reply for one generated token.
type Token struct {
	Text         string  // complete UTF-8 text the token adds (may be empty)
	Count        int     // tokens generated so far
	TokensPerSec float64 // decode speed so far
}

// Done is the final reply of a generation.
type Done struct {
	Prompt       string // the text the prompt was (the chat template's output in chat mode)
	PromptTokens int
	CachedTokens int
	PrefillMs    float64
	Generated    int
	DecodeMs     float64
	TokensPerSec float64
	Stop         string // eos, max_tokens, context, json, stopped
}

// Worker is the engine host. Its methods are called from one goroutine,
// except Stop, which may be called at any time.
type Worker struct {
	// loading
	buf    []byte
	filled int
	name   string

	// loaded
	file  *gguf.File
	model *engine.Model
	sess  *engine.Session
	info  ModelInfo

	running atomic.Bool
	stop    atomic.Bool
}

// New returns a Worker with no model.
func New() *Worker { return &Worker{} }

// Info returns the loaded model's description and whether one is loaded.
func (w *Worker) Info() (ModelInfo, bool) { return w.info, w.model != nil }

// LoadDefault loads the embedded stories260K model (no copy: the model is
// read from the wasm binary's data).
func (w *Worker) LoadDefault() (ModelInfo, error) {
	w.Unload()
	info, err := w.load(defaultmodel.Bytes(), defaultmodel.Name)
	info.BuiltIn = true
	w.info.BuiltIn = true
	return info, err
}

// Begin starts loading a file of size bytes: the only allocation of the
// model's bytes. The current model is unloaded first so its memory can be
// reused.
func (w *Worker) Begin(name string, size int64) error {
	if w.running.Load() {
		return ErrBusy
	}
	if size > MaxModelBytes {
		return fmt.Errorf("%w: %s is %s; the wasm32 engine holds at most %s (a 32-bit memory of 4 GiB, with room for the KV cache)",
			ErrTooLarge, name, FormatBytes(size), FormatBytes(MaxModelBytes))
	}
	if size <= 0 {
		return fmt.Errorf("%w: %s is empty", ErrLoading, name)
	}
	w.Unload()
	w.buf = make([]byte, size)
	w.filled = 0
	w.name = name
	return nil
}

// Next returns the region of the model buffer the next n bytes go to and
// marks it filled. The bridge copies a chunk of the download into it.
func (w *Worker) Next(n int) ([]byte, error) {
	if w.buf == nil {
		return nil, fmt.Errorf("%w: chunk without a begin", ErrLoading)
	}
	if n < 0 || n > len(w.buf)-w.filled {
		err := fmt.Errorf("%w: %s sent more than the announced %d bytes", ErrLoading, w.name, len(w.buf))
		w.Unload()
		return nil, err
	}
	p := w.buf[w.filled : w.filled+n]
	w.filled += n
	return p, nil
}

// Finish parses the filled buffer and loads the model.
func (w *Worker) Finish() (ModelInfo, error) {
	if w.buf == nil {
		return ModelInfo{}, fmt.Errorf("%w: finish without a begin", ErrLoading)
	}
	if w.filled != len(w.buf) {
		err := fmt.Errorf("%w: %s ended after %d of the announced %d bytes", ErrLoading, w.name, w.filled, len(w.buf))
		w.Unload()
		return ModelInfo{}, err
	}
	b, name := w.buf, w.name
	w.buf = nil
	return w.load(b, name)
}

// LoadSplit loads the lead's part of a model split over 1+len(peers)
// instances (one Web Worker each): the file, of size bytes, is read through
// r (a SharedArrayBuffer every instance reads) and only the lead's part is
// copied out of it: the header, the embeddings and norms, and its rows of
// every matrix. The peers serve the other parts (see LoadShard).
func (w *Worker) LoadSplit(name string, r io.ReaderAt, size int64, peers []engine.Peer) (ModelInfo, error) {
	if w.running.Load() {
		return ModelInfo{}, ErrBusy
	}
	if size > MaxModelBytes {
		return ModelInfo{}, fmt.Errorf("%w: %s is %s; the browser engine holds at most %s", ErrTooLarge, name, FormatBytes(size), FormatBytes(MaxModelBytes))
	}
	w.Unload()
	f, err := gguf.ParseHeader(r, size)
	if err != nil {
		return ModelInfo{}, fmt.Errorf("%s: %w", name, err)
	}
	return w.open(f, name, size, engine.LoadOptions{Data: r, Parts: 1 + len(peers)}, peers)
}

// LoadShard loads part of parts of the model of size bytes read through r,
// for a Web Worker that serves it to the lead (LoadSplit).
func LoadShard(r io.ReaderAt, size int64, part, parts int) (*engine.Shard, error) {
	if size > MaxModelBytes {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, FormatBytes(size))
	}
	f, err := gguf.ParseHeader(r, size)
	if err != nil {
		return nil, err
	}
	m, err := engine.LoadWith(f, engine.LoadOptions{Data: r, Part: part, Parts: parts})
	if err != nil {
		return nil, err
	}
	// The context the lead's session asks for (open).
	return engine.NewShard(m, engine.SessionOptions{Context: DefaultContext, Threads: 1})
}

// SplitWorkers is the most Web Workers the model of size bytes read
// through r divides its attention over (engine.MaxParts): the page splits
// a model over no more by default. name is the file's, for the error.
func SplitWorkers(name string, r io.ReaderAt, size int64) (int, error) {
	if size > MaxModelBytes {
		return 0, fmt.Errorf("%w: %s is %s; the browser engine holds at most %s", ErrTooLarge, name, FormatBytes(size), FormatBytes(MaxModelBytes))
	}
	f, err := gguf.ParseHeader(r, size)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	n, err := engine.MaxParts(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

func (w *Worker) load(b []byte, name string) (ModelInfo, error) {
	f, err := gguf.Parse(b)
	if err != nil {
		w.Unload()
		return ModelInfo{}, fmt.Errorf("%s: %w", name, err)
	}
	return w.open(f, name, int64(len(b)), engine.LoadOptions{}, nil)
}

// open loads the model of the parsed file f and makes its session.
func (w *Worker) open(f *gguf.File, name string, size int64, o engine.LoadOptions, peers []engine.Peer) (ModelInfo, error) {
	fail := func(err error) (ModelInfo, error) {
		w.Unload()
		return ModelInfo{}, fmt.Errorf("%s: %w", name, err)
	}
	m, err := engine.LoadWith(f, o)
	if err != nil {
		return fail(err)
	}
	s, err := m.NewSession(engine.SessionOptions{Context: DefaultContext, Threads: 1, Peers: peers})
	if err != nil {
		return fail(err)
	}
	w.file, w.model, w.sess = f, m, s
	c := &m.Config
	w.info = ModelInfo{
		Name:         name,
		Arch:         c.Arch,
		Bytes:        size,
		Params:       approxParams(c),
		Dim:          c.Dim,
		Layers:       c.Layers,
		Heads:        c.Heads,
		KVHeads:      c.KVHeads,
		VocabSize:    c.VocabSize,
		TrainCtx:     c.TrainCtx,
		Context:      s.Context(),
		FileType:     c.FileTypeStr,
		ChatTemplate: m.Chat().Family(),
		Workers:      1 + len(peers),
	}
	if c.Name != "" {
		w.info.Name = c.Name + " (" + name + ")"
	}
	return w.info, nil
}

func approxParams(c *engine.Config) int64 {
	perLayer := int64(c.Dim)*int64(c.Dim)*2 + int64(c.Dim)*int64(c.KVDim)*2 + 3*int64(c.Dim)*int64(c.HiddenDim)
	p := int64(c.Layers)*perLayer + int64(c.VocabSize)*int64(c.Dim)
	if !c.TiedOutput {
		p += int64(c.VocabSize) * int64(c.Dim)
	}
	return p
}

// SplitStats is where the session's time went on the lead of a split
// model (zero when whole or none is loaded).
func (w *Worker) SplitStats() engine.SplitStats {
	if w.sess == nil {
		return engine.SplitStats{}
	}
	return w.sess.SplitStats()
}

// Unload drops the model, its session and any half-loaded buffer.
func (w *Worker) Unload() {
	if w.sess != nil {
		w.sess.Close()
	}
	w.buf, w.filled, w.name = nil, 0, ""
	w.file, w.model, w.sess = nil, nil, nil
	w.info = ModelInfo{}
}

// Stop asks the running generation to end after the current token. It is
// safe to call from any goroutine and does nothing when none runs.
func (w *Worker) Stop() {
	if w.running.Load() {
		w.stop.Store(true)
	}
}

// Prompt returns the text a request turns into: the prompt as given, or in
// chat mode the messages formatted by the model's chat formatter (without a
// BOS the template writes first when the tokenizer adds one itself).
func (w *Worker) Prompt(r *GenerateRequest) (string, error) {
	if w.model == nil {
		return "", ErrNoModel
	}
	if len(r.Messages) == 0 {
		return r.Prompt, nil
	}
	return w.model.Chat().Format(r.Messages)
}

// Generate runs one request, calling emit for every token (emit returning
// false stops like Stop does).
func (w *Worker) Generate(r GenerateRequest, emit func(Token) bool) (Done, error) {
	if w.model == nil {
		return Done{}, ErrNoModel
	}
	if !w.running.CompareAndSwap(false, true) {
		return Done{}, ErrBusy
	}
	defer w.running.Store(false)
	w.stop.Store(false)
	if r.MaxTokens < 0 || r.TopK < 0 || r.Temperature < 0 || r.TopP < 0 || r.TopP > 1 {
		return Done{}, fmt.Errorf("%w: maxTokens %d, temperature %g, topP %g, topK %d", ErrBadParams, r.MaxTokens, r.Temperature, r.TopP, r.TopK)
	}
	text, err := w.Prompt(&r)
	if err != nil {
		return Done{}, err
	}
	ids := w.model.Tokenizer.Encode(text, true)
	opts := engine.GenerateOptions{
		MaxTokens: r.MaxTokens,
		JSON:      r.JSON,
		Sampling:  sample.Params{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, Seed: r.Seed},
	}
	count := 0
	start := time.Now()
	st, err := w.sess.Generate(ids, opts, func(id int, b []byte) bool {
		if id >= 0 {
			count++
		}
		tok := Token{Text: string(b), Count: count, TokensPerSec: perSec(count, time.Since(start))}
		if !emit(tok) {
			return false
		}
		return !w.stop.Load()
	})
	d := Done{
		Prompt:       text,
		PromptTokens: st.PromptTokens,
		CachedTokens: st.CachedTokens,
		PrefillMs:    ms(st.Prefill),
		Generated:    st.Generated,
		DecodeMs:     ms(st.Decode),
		TokensPerSec: perSec(st.Generated, st.Decode),
		Stop:         string(st.Stop),
	}
	if err != nil {
		// The session may hold a half-computed position: forget the cache.
		w.sess.Rewind(0)
		return d, err
	}
	return d, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func perSec(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// FormatBytes renders a byte count for people: 1.1 MB, 640 KB, 3.1 GB.
func FormatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KB", "MB", "GB", "TB"} {
		f /= unit
		if f < unit || u == "TB" {
			if f < 10 {
				return fmt.Sprintf("%.1f %s", f, u)
			}
			return fmt.Sprintf("%.0f %s", f, u)
		}
	}
	return ""
}
