// Package host is the browser worker's engine host in plain Go: it owns
// the model bytes, the loaded model and one session, and turns the page's
// requests (load, generate, stop, unload) into engine calls and replies. The
// syscall/js bridge in the parent directory only converts messages; all the
// state and every decision live here, so they are tested natively.
//
// Loading streams the file into one Go []byte exactly once: Begin allocates
// it (refusing sizes over MaxModelBytes before any byte is copied), the
// bridge copies chunks into the slices Next hands out, and Finish parses the
// GGUF in place (tensors stay views into the buffer). A model split into
// shards by llama.cpp's gguf-split is loaded the same way, its files laid end
// to end in the one buffer (Files, BeginFiles).
package host

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/engine/grammar"
	"github.com/picolm/picolm-wasm/engine/jinja"
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

// MaxStops is the most stop sequences a request may give, and MaxStopBytes
// the longest one (OpenAI allows 4).
const (
	MaxStops     = 16
	MaxStopBytes = 1024
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
// SeedOf is the sampler's seed for a seed given as a JS number: a whole
// number from -(2^53-1) to 2^53-1 (web/openai.js refuses others), taken as
// the Cloudflare Worker takes its int64 seeds, two's complement for the
// negative ones, so a seed gives the same sampling on both.
func SeedOf(f float64) uint64 {
	if f < 0 {
		return uint64(int64(f))
	}
	return uint64(f)
}

type GenerateRequest struct {
	Prompt      string
	Messages    []chat.Message
	MaxTokens   int
	Temperature float32
	TopP        float32
	TopK        int
	MinP        float32
	Seed        uint64
	JSON        bool
	// Grammar (GBNF, llama.cpp's syntax) or JSONSchema (a JSON Schema
	// document), when set, constrain the output; at most one of them and
	// JSON may be set.
	Grammar    string
	JSONSchema string
	// Stop ends the generation at the first of these texts; the text before
	// it is emitted, the stop sequence and anything after are not. It
	// applies to text, not to tool calls.
	Stop []string
	// Tools are the functions the reply may call (chat only), as
	// ToolChoice says (Mode "" is "none"). They are listed in the prompt
	// (chat.Formatter.FormatTools) and the calls are constrained by
	// chat.ToolGrammar and read back by chat.ToolStream, as the Cloudflare
	// Worker does.
	Tools      []chat.Tool
	ToolChoice chat.ToolChoice
	// Logprobs asks for every generated token's log-probability and the
	// TopLogprobs (0 to engine.MaxTopLogprobs) most likely tokens.
	Logprobs    bool
	TopLogprobs int
}

// Token is the reply for one generated token. Its slices (Calls, Logprobs
// and their Top) are the host's buffers, reused for the next token: they
// are valid until emit returns, so copy what is kept (the bridge turns them
// into JS values at once). Its strings are its own.
type Token struct {
	Text         string           // complete UTF-8 text the token adds (may be empty)
	Calls        []chat.ToolEvent // pieces of tool calls the token completes (Call true: a name first, then arguments)
	Logprobs     []Logprob        // with Logprobs: the entries of the tokens generated since the last Token
	Count        int              // tokens generated so far
	TokensPerSec float64          // decode speed so far
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
	Stop         string // eos, max_tokens, context, json, grammar, stop_sequence, stopped, tool_calls
	StopReason   string // why a grammar ended the reply early (engine.ErrGrammarStuck's text), else ""
}

// Files are the files a model is in, laid end to end in one buffer: a GGUF
// file, or the shards of a split GGUF in order (gguf.ParseSet): their names
// (for messages and the shard-name checks) and sizes.
type Files struct {
	Names []string
	Sizes []int64
}

// OneFile is a model in one file.
func OneFile(name string, size int64) Files {
	return Files{Names: []string{name}, Sizes: []int64{size}}
}

// Size is the files' total size.
func (fs Files) Size() int64 {
	n := int64(0)
	for _, s := range fs.Sizes {
		n += min(max(s, 0), 1<<53) // sizes come from JS numbers; the sum cannot overflow
	}
	return n
}

func (fs Files) check() error {
	if len(fs.Sizes) == 0 || len(fs.Names) != len(fs.Sizes) || len(fs.Sizes) > gguf.MaxShards {
		return fmt.Errorf("%w: %d file names and %d sizes", ErrLoading, len(fs.Names), len(fs.Sizes))
	}
	for i, s := range fs.Sizes {
		if s <= 0 {
			return fmt.Errorf("%w: %s is empty", ErrLoading, fs.Names[i])
		}
	}
	return nil
}

// parseHeaders parses the header of every file of fs, laid end to end in r,
// and joins a split GGUF's shards into one model (gguf.ParseHeaderSet).
func parseHeaders(r io.ReaderAt, fs Files) (*gguf.File, error) {
	if err := fs.check(); err != nil {
		return nil, err
	}
	return gguf.ParseHeaderSet(r, fs.Sizes, fs.Names)
}

// Worker is the engine host. Its methods are called from one goroutine,
// except Stop, which may be called at any time.
type Worker struct {
	// loading
	buf    []byte
	filled int
	name   string
	files  Files

	// loaded
	file  *gguf.File
	model *engine.Model
	sess  *engine.Session
	info  ModelInfo

	running atomic.Bool
	stop    atomic.Bool

	// textBuf, lps and tokenTexts are the per-token path's buffers: a
	// Token's text and log-probability entries (reused token after token),
	// and the text and bytes of each token id met in logprobs (made once per
	// model, on first use).
	textBuf    []byte
	lps        []Logprob
	tokenTexts []LogprobAlt

	// grams are the compiled grammars of recent schemas, grammars and tool
	// sets, by their source (a page that goes back to one compiles it once,
	// and the session keeps its matcher while it generates under it).
	grams *grammar.Cache
}

// Grammar cache bounds: the grammars kept, and the largest kept.
const (
	grammarCacheSize  = 16
	grammarCacheElems = 1 << 16
)

// New returns a Worker with no model.
func New() *Worker {
	return &Worker{grams: &grammar.Cache{Size: grammarCacheSize, MaxElems: grammarCacheElems}}
}

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
func (w *Worker) Begin(name string, size int64) error { return w.BeginFiles(name, OneFile(name, size)) }

// BeginFiles is Begin for a model in several files (a split GGUF's shards),
// which come one after the other; name names them all.
func (w *Worker) BeginFiles(name string, fs Files) error {
	if w.running.Load() {
		return ErrBusy
	}
	size := fs.Size()
	if len(fs.Sizes) > 1 {
		if err := fs.check(); err != nil {
			return err
		}
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
	w.files = fs
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
	b, name, fs := w.buf, w.name, w.files
	w.buf = nil
	f, err := gguf.ParseSet(b, fs.Sizes, fs.Names)
	if err != nil {
		w.Unload()
		return ModelInfo{}, err
	}
	return w.open(f, name, int64(len(b)), engine.LoadOptions{}, nil, nil)
}

// LoadSplit loads the lead's part of a model split over 1+len(peers)
// instances (one Web Worker each): the file, of size bytes, is read through
// r (a SharedArrayBuffer every instance reads) and only the lead's part is
// copied out of it: the header, the embeddings and norms, and its rows of
// every matrix. The peers serve the other parts (see LoadShard), joined to
// the lead by mesh.
func (w *Worker) LoadSplit(name string, r io.ReaderAt, size int64, peers []engine.Peer, mesh engine.Mesh) (ModelInfo, error) {
	return w.LoadSplitFiles(name, r, OneFile(name, size), peers, mesh)
}

// LoadSplitFiles is LoadSplit for a model in the files fs (a split GGUF's
// shards), laid end to end in r.
func (w *Worker) LoadSplitFiles(name string, r io.ReaderAt, fs Files, peers []engine.Peer, mesh engine.Mesh) (ModelInfo, error) {
	if w.running.Load() {
		return ModelInfo{}, ErrBusy
	}
	size := fs.Size()
	if size > MaxModelBytes {
		return ModelInfo{}, fmt.Errorf("%w: %s is %s; the browser engine holds at most %s", ErrTooLarge, name, FormatBytes(size), FormatBytes(MaxModelBytes))
	}
	w.Unload()
	f, err := parseHeaders(r, fs)
	if err != nil {
		return ModelInfo{}, err
	}
	return w.open(f, name, size, engine.LoadOptions{Data: r, Parts: 1 + len(peers)}, peers, mesh)
}

// LoadShard loads part of parts of the model of size bytes read through r,
// for a Web Worker that runs it beside the lead (LoadSplit).
func LoadShard(r io.ReaderAt, size int64, part, parts int) (*engine.Shard, error) {
	return LoadShardFiles(r, OneFile("the model file", size), part, parts)
}

// LoadShardFiles is LoadShard for a model in the files fs (a split GGUF's
// shards), laid end to end in r.
func LoadShardFiles(r io.ReaderAt, fs Files, part, parts int) (*engine.Shard, error) {
	if size := fs.Size(); size > MaxModelBytes {
		return nil, fmt.Errorf("%w: %s", ErrTooLarge, FormatBytes(size))
	}
	f, err := parseHeaders(r, fs)
	if err != nil {
		return nil, err
	}
	return loadShardPart(f, r, part, parts)
}

// loadShardPart loads part of parts of the model whose header is f, its
// tensor data read through r, as a shard running beside the lead's session.
func loadShardPart(f *gguf.File, r io.ReaderAt, part, parts int) (*engine.Shard, error) {
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
	return w.open(f, name, int64(len(b)), engine.LoadOptions{}, nil, nil)
}

// open loads the model of the parsed file f and makes its session.
func (w *Worker) open(f *gguf.File, name string, size int64, o engine.LoadOptions, peers []engine.Peer, mesh engine.Mesh) (ModelInfo, error) {
	fail := func(err error) (ModelInfo, error) {
		w.Unload()
		return ModelInfo{}, fmt.Errorf("%s: %w", name, err)
	}
	m, err := engine.LoadWith(f, o)
	if err != nil {
		return fail(err)
	}
	s, err := m.NewSession(engine.SessionOptions{Context: DefaultContext, Threads: 1, Peers: peers, Mesh: mesh})
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
	w.buf, w.filled, w.name, w.files = nil, 0, "", Files{}
	w.file, w.model, w.sess = nil, nil, nil
	w.info = ModelInfo{}
	w.tokenTexts = nil // the next model's tokens are others
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
	return w.model.Chat().FormatTools(r.Messages, r.Tools)
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
	if r.MaxTokens < 0 || r.TopK < 0 || !(r.Temperature >= 0) || !(r.TopP >= 0 && r.TopP <= 1) || !(r.MinP >= 0 && r.MinP <= 1) {
		return Done{}, fmt.Errorf("%w: maxTokens %d, temperature %g, topP %g, topK %d, minP %g", ErrBadParams, r.MaxTokens, r.Temperature, r.TopP, r.TopK, r.MinP)
	}
	if err := checkStops(r.Stop); err != nil {
		return Done{}, err
	}
	if r.TopLogprobs < 0 || r.TopLogprobs > engine.MaxTopLogprobs {
		return Done{}, badParam("top_logprobs", "top_logprobs must be between 0 and %d (got %d)", engine.MaxTopLogprobs, r.TopLogprobs)
	}
	if len(r.Messages) == 0 && (len(r.Tools) > 0 || r.ToolChoice.Mode != "" && r.ToolChoice.Mode != "none") {
		return Done{}, badParam("tools", "tools need a chat (messages)")
	}
	g, err := w.toolGrammar(&r)
	if err != nil {
		return Done{}, err
	}
	tools := g != nil
	if !tools {
		if g, err = w.grammar(&r); err != nil {
			return Done{}, err
		}
	}
	text, err := w.Prompt(&r)
	if err != nil {
		return Done{}, err
	}
	ids := w.model.Tokenizer.Encode(text, true)
	var lp *engine.Logprobs
	if r.Logprobs {
		lp = engine.NewLogprobs(r.TopLogprobs)
	}
	opts := engine.GenerateOptions{
		MaxTokens: r.MaxTokens,
		JSON:      r.JSON,
		Grammar:   g,
		Sampling:  sample.Params{Temperature: r.Temperature, TopP: r.TopP, TopK: r.TopK, MinP: r.MinP, Seed: r.Seed},
		Logprobs:  lp,
	}
	count := 0
	start := time.Now()
	stops := engine.NewStopper(r.Stop)
	hit, left := false, false
	calls := 0
	// tok collects what one engine token adds: text (through the stop
	// sequences) and, with tools, pieces of calls (chat.ToolStream).
	var tok Token
	tb := w.textBuf[:0] // tok.Text's bytes
	content := func(b []byte) {
		if hit {
			return
		}
		out, h := stops.Push(b)
		tb = append(tb, out...)
		hit = h
	}
	var ts *chat.ToolStream
	event := func(e chat.ToolEvent) {
		if !e.Call {
			content(unsafe.Slice(unsafe.StringData(e.Content), len(e.Content))) // read, not kept
			return
		}
		if e.Name != "" {
			calls++
		}
		if !hit {
			tok.Calls = append(tok.Calls, e)
		}
	}
	if tools {
		ts = &chat.ToolStream{}
	}
	nlp := 0 // entries of w.lps in this Token
	send := func() bool {
		tok.Text = string(tb) // a string of its own (a caller may keep it): the one allocation of a token with text
		tok.Logprobs = w.lps[:nlp]
		tok.Count, tok.TokensPerSec = count, perSec(count, time.Since(start))
		ok := emit(tok)
		tok.Text, tok.Calls, tok.Logprobs, tb, nlp = "", tok.Calls[:0], nil, tb[:0], 0
		if !ok {
			left = true
		}
		return ok
	}
	defer func() { w.textBuf = tb[:0] }()
	st, err := w.sess.Generate(ids, opts, func(id int, b []byte) bool {
		if hit || left {
			return false // the decoder's flush after a stop sequence
		}
		if id >= 0 {
			count++
			if lp != nil {
				w.logprob(nlp, id, lp)
				nlp++
			}
		}
		if ts != nil {
			ts.Push(string(b), event)
		} else {
			content(b)
		}
		if !send() || hit {
			return false
		}
		return !w.stop.Load()
	})
	stuck := errors.Is(err, engine.ErrGrammarStuck)
	if stuck {
		st.Stop = engine.StopGrammar
	}
	cut := false // the reply ends inside a call
	if !hit && !left && (err == nil || stuck) {
		if ts != nil {
			cut = ts.InCall()
			ts.Flush(event)
		}
		if rest := stops.Flush(); len(rest) > 0 {
			tb = append(tb, rest...)
		}
		if len(tb) > 0 || len(tok.Calls) > 0 || nlp > 0 {
			send()
		}
	}
	if hit {
		st.Stop = StopSequence
	}
	if calls > 0 && !cut && !hit && st.Stop != engine.StopCaller {
		st.Stop = StopToolCalls
	}
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
	if stuck {
		d.StopReason, err = err.Error(), nil
	}
	if err != nil {
		// The session may hold a half-computed position: forget the cache.
		w.sess.Rewind(0)
		if errors.Is(err, engine.ErrJSONBudget) || errors.Is(err, engine.ErrGrammarBudget) {
			// Nothing was generated: say whether max_tokens or the context left no room.
			if r.MaxTokens > 0 && r.MaxTokens < w.sess.Context()-len(ids) {
				return d, &ParamError{Param: "max_tokens", Msg: "the constrained output cannot be completed: " + err.Error(), // the Worker's message
					Err: fmt.Errorf("%w: maxTokens %d: %w", ErrBadParams, r.MaxTokens, err)}
			}
			return d, fmt.Errorf("%w: %d of %d positions are left after the prompt: %w", engine.ErrContext, w.sess.Context()-len(ids), w.sess.Context(), err)
		}
		return d, err
	}
	return d, nil
}

// StopSequence is the Done.Stop of a generation that ended at one of its
// stop sequences.
const StopSequence = "stop_sequence"

// StopToolCalls is the Done.Stop of a reply that ends with complete tool
// calls (finish_reason "tool_calls").
const StopToolCalls = "tool_calls"

// grammar returns the compiled grammar a request asks for (nil for none),
// compiling it unless it is the last one compiled.
func (w *Worker) grammar(r *GenerateRequest) (*grammar.GBNF, error) {
	src, schema := r.Grammar, false
	if r.JSONSchema != "" {
		if src != "" {
			return nil, fmt.Errorf("%w: a grammar and a JSON schema cannot both constrain one generation", ErrBadParams)
		}
		src, schema = r.JSONSchema, true
	}
	if src == "" {
		return nil, nil
	}
	if r.JSON {
		return nil, fmt.Errorf("%w: JSON mode and a grammar or JSON schema cannot both constrain one generation", ErrBadParams)
	}
	key := "gbnf\x00" + src
	if schema {
		key = "schema\x00" + src
	}
	g, err := w.grams.Get(key, func() (*grammar.GBNF, error) {
		if schema {
			return grammar.FromJSONSchema([]byte(src))
		}
		return grammar.ParseGBNF(src)
	})
	if err != nil {
		// The Worker's messages; the JS API names the field (response_format's).
		if schema {
			return nil, &ParamError{Param: "jsonSchema", Msg: "the schema cannot be used: " + err.Error(), Err: fmt.Errorf("%w: %w", ErrBadParams, err)}
		}
		return nil, &ParamError{Param: "grammar", Msg: "the grammar cannot be compiled: " + err.Error(), Err: fmt.Errorf("%w: %w", ErrBadParams, err)}
	}
	return g, nil
}

func checkStops(stops []string) error {
	if len(stops) > MaxStops {
		return fmt.Errorf("%w: at most %d stop sequences, got %d", ErrBadParams, MaxStops, len(stops))
	}
	for _, s := range stops {
		if s == "" {
			return fmt.Errorf("%w: a stop sequence is empty", ErrBadParams)
		}
		if len(s) > MaxStopBytes {
			return fmt.Errorf("%w: a stop sequence is %d bytes, at most %d are allowed", ErrBadParams, len(s), MaxStopBytes)
		}
	}
	return nil
}

// Error codes of the replies (Code), the JS API's PicoLMError codes.
const (
	CodeBadRequest  = "bad_request"  // the request's parameters, grammar, schema or messages
	CodeContextFull = "context_full" // the prompt (and what must be generated) does not fit the context
	CodeModelLoad   = "model_load"   // the model could not be loaded
	CodeNoModel     = "no_model"     // no model is loaded
	CodeEngine      = "engine"       // anything else
	CodeState       = "state"        // a session state (saveState, restoreState) refused
	// CodeNoEmbeddings is a bad request's code for embeddings of a model
	// that makes none (the Worker's "embeddings_not_supported").
	CodeNoEmbeddings = "embeddings_not_supported"
)

// Code classifies an error of Generate for the page.
func Code(err error) string {
	switch {
	case errors.Is(err, ErrState), errors.Is(err, engine.ErrCacheFile):
		return CodeState
	case errors.Is(err, engine.ErrNoEmbedding):
		return CodeNoEmbeddings
	case errors.Is(err, engine.ErrContext):
		return CodeContextFull
	case errors.Is(err, ErrBadParams), errors.Is(err, grammar.ErrGrammar), errors.Is(err, grammar.ErrSchema),
		errors.Is(err, jinja.ErrRender), errors.Is(err, engine.ErrEmptyPrompt), errors.Is(err, engine.ErrGrammarStuck):
		return CodeBadRequest
	case errors.Is(err, ErrNoModel):
		return CodeNoModel
	case errors.Is(err, ErrTooLarge), errors.Is(err, ErrLoading):
		return CodeModelLoad
	}
	return CodeEngine
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
