//go:build js

// Command worker is the engine's Web Worker: web/worker.js starts it, and it
// bridges the page's postMessage protocol to package host.
//
// Page → worker: {type, id, ...}
//
//	load     {builtin: true} or {name, bytes: ArrayBuffer (transferred)}
//	plan     {name, model: SharedArrayBuffer, size}  replies plan {maxWorkers}: the Workers the model's attention divides over
//	loadSplit {name, model: SharedArrayBuffer, size, channels: [SharedArrayBuffer]}
//	                                 the lead of a model split over workers (split_js.go)
//	shard    {model, size, part, parts, channel}  serve a part (never returns; replies shardReady or error)
//	begin    {name, size}            then chunk {data: ArrayBuffer}..., then end
//	blob     {name, blob: Blob}      read by the worker in slices (progress {loaded} replies), then loaded;
//	         {name, blobs: [Blob], names}  the shards of a split GGUF, in order, read one after the other
//
// loadSplit and shard take the shards of a split GGUF laid end to end in
// model, with sizes: [n] and names: [string]; or, to read only the Worker's
// own rows (parts_js.go), files: [URL or Blob], sizes, names and prefixes:
// [ArrayBuffer] (each file's header) in place of model.
//
//	planParts {name, files: [URL or Blob], names, workers, auto, limit}
//	                                 replies plan {workers, maxWorkers, need: [bytes], sizes, prefixes}
//	                                 (host.PlanSplit), or plan {noRange: true}
//
//	sync     {}                      answered with ok once the messages before it are handled
//	generate {prompt | messages, maxTokens, temperature, topP, topK, minP, seed, json,
//	          grammar (GBNF source), jsonSchema (a JSON Schema as text), stop: [string],
//	          logprobs, topLogprobs, tools: [{name, description, parameters (JSON text)}],
//	          toolChoice {mode, function, parallel}}; a message is {role, content,
//	          toolCalls: [{id, name, arguments}], toolCallId, name}
//	embed    {inputs: [{text} | {tokens: [id]}]}  answered with embedded {data: [ArrayBuffer of float32s], tokens: [n]}
//	saveState {}                     answered with state {data: ArrayBuffer}: the KV state (host.SaveState)
//	restoreState {data: ArrayBuffer} answered with restored {positions}
//	         (saveState and restoreState run in the queue, after the generations before them)
//	stop     {}                      (the generation with this id ends after its current token;
//	                                 one still queued ends before it starts, with stop "stopped")
//	unload   {}
//
// Worker → page: ready, loaded {info, memory}, ok (begin accepted), plan {maxWorkers},
// state {data}, restored {positions},
// token {text, count, tokensPerSec, calls?: [{index, name?, arguments}], logprobs?: [...]},
// done {stats, memory}, error {message, code, param} (code: host.Code's
// classes; param: host.Param).
package main

import (
	"errors"
	"fmt"
	"syscall/js"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/wasm/browser/host"
)

// yieldEvery bounds how long a generation keeps the event loop from handling
// a stop message.
const yieldEvery = 20 * time.Millisecond

type bridge struct {
	w       *host.Worker
	self    js.Value
	queue   chan js.Value    // generate requests, run one at a time
	running float64          // id of the running generation
	started float64          // id of the last generation started
	stopped map[float64]bool // ids of queued generations stopped before they started
	resume  chan struct{}
	port    js.Value
	peers   []*sabPeer // the shards of a split model
	mesh    *sabMesh   // the lead's side of its mesh
}

func main() {
	b := &bridge{
		w:       host.New(),
		self:    js.Global(),
		queue:   make(chan js.Value, 64),
		resume:  make(chan struct{}, 1),
		stopped: map[float64]bool{},
	}
	// A MessageChannel round trip is the fastest way back through the event
	// loop (setTimeout is clamped to 4 ms).
	mc := js.Global().Get("MessageChannel").New()
	b.port = mc.Get("port2")
	mc.Get("port1").Set("onmessage", js.FuncOf(func(js.Value, []js.Value) any {
		select {
		case b.resume <- struct{}{}:
		default:
		}
		return nil
	}))
	b.self.Set("onmessage", js.FuncOf(func(_ js.Value, args []js.Value) any {
		b.handle(args[0].Get("data"))
		return nil
	}))
	b.post(map[string]any{"type": "ready", "maxModelBytes": float64(host.MaxModelBytes)}, nil)
	for req := range b.queue {
		switch req.Get("type").String() {
		case "blob":
			b.readBlob(req)
		case "plan":
			b.plan(req)
		case "planParts":
			b.planParts(req)
		case "loadSplit":
			b.loadSplit(req)
		case "shard":
			b.serveShard(req)
		case "embed":
			b.embed(req)
		case "saveState":
			b.saveState(req)
		case "restoreState":
			b.restoreState(req)
		default:
			b.generate(req)
		}
	}
}

func (b *bridge) post(msg map[string]any, transfer []any) {
	if transfer != nil {
		b.self.Call("postMessage", msg, transfer)
		return
	}
	b.self.Call("postMessage", msg)
}

func (b *bridge) reply(id js.Value, typ string, fields map[string]any) {
	m := map[string]any{"type": typ, "id": id}
	for k, v := range fields {
		m[k] = v
	}
	b.post(m, nil)
}

// fail replies with an error, classified by host.Code (web/picolm.js makes
// any error of a load a ModelLoadError).
func (b *bridge) fail(id js.Value, err error) {
	b.reply(id, "error", map[string]any{"message": err.Error(), "code": host.Code(err), "param": host.Param(err)})
}

// memory reports the worker's memory: the wasm linear memory (Go's whole
// heap, which never shrinks) and the JS heap where Chromium exposes it;
// with a split model also the shards' wasm memories and the total.
func (b *bridge) memory() js.Value {
	f := js.Global().Get("picolmMemory")
	if f.Type() != js.TypeFunction {
		return js.Null()
	}
	m := f.Invoke()
	if len(b.peers) > 0 && m.Type() == js.TypeObject {
		shards := 0.0
		for _, p := range b.peers {
			shards += float64(p.c.load(ixPages)) * 65536
		}
		m.Set("shardWasmBytes", shards)
		m.Set("totalWasmBytes", m.Get("wasmBytes").Float()+shards)
		m.Set("workers", len(b.peers)+1)
	}
	return m
}

func (b *bridge) loaded(id js.Value, info host.ModelInfo, err error) {
	if err != nil {
		b.fail(id, err)
		return
	}
	b.reply(id, "loaded", map[string]any{"info": info.Map(), "memory": b.memory()})
}

// handle runs on the event loop: everything but generation is quick and
// done here, in message order.
func (b *bridge) handle(msg js.Value) {
	id := msg.Get("id")
	switch t := msg.Get("type").String(); t {
	case "load":
		if msg.Get("builtin").Truthy() {
			info, err := b.w.LoadDefault()
			b.loaded(id, info, err)
			return
		}
		data := js.Global().Get("Uint8Array").New(msg.Get("bytes"))
		name := msg.Get("name").String()
		n := data.Get("byteLength").Int()
		if err := b.w.Begin(name, int64(n)); err != nil {
			b.fail(id, err)
			return
		}
		if !b.copyChunk(id, data) {
			return
		}
		info, err := b.w.Finish()
		b.loaded(id, info, err)
	case "begin":
		if err := b.w.Begin(msg.Get("name").String(), int64(msg.Get("size").Float())); err != nil {
			b.fail(id, err)
			return
		}
		b.reply(id, "ok", nil)
	case "chunk":
		b.copyChunk(id, js.Global().Get("Uint8Array").New(msg.Get("data")))
	case "sync": // every earlier message has been handled
		b.reply(id, "ok", nil)
	case "end":
		info, err := b.w.Finish()
		b.loaded(id, info, err)
	case "generate", "embed", "blob", "plan", "planParts", "loadSplit", "shard", "saveState", "restoreState":
		b.queue <- msg
	case "stop":
		if id.Float() == b.running {
			b.w.Stop()
		} else if id.Float() > b.started {
			b.stopped[id.Float()] = true // still queued (ids grow): it will not start
		}
	case "unload":
		b.w.Unload()
		b.peers, b.mesh = nil, nil
		b.reply(id, "unloaded", map[string]any{"memory": b.memory()})
	default:
		b.reply(id, "error", map[string]any{"message": "unknown message type " + t})
	}
}

// saveState replies with the session's KV state, transferred to the page.
func (b *bridge) saveState(msg js.Value) {
	id := msg.Get("id")
	data, err := b.w.SaveState()
	if err != nil {
		b.fail(id, err)
		return
	}
	u8 := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(u8, data)
	buf := u8.Get("buffer")
	b.post(map[string]any{"type": "state", "id": id, "data": buf}, []any{buf})
}

// restoreState restores a state the page read back; one larger than the
// model's whole context could be is refused before it is copied.
func (b *bridge) restoreState(msg js.Value) {
	id := msg.Get("id")
	u8 := js.Global().Get("Uint8Array").New(msg.Get("data"))
	n := int64(u8.Get("byteLength").Int())
	if max := b.w.MaxStateBytes(); max == 0 {
		b.fail(id, host.ErrNoModel)
		return
	} else if n > max {
		b.fail(id, fmt.Errorf("%w: %w: %d bytes, more than the %d a state of this model's whole context takes", host.ErrState, engine.ErrCacheFile, n, max))
		return
	}
	data := make([]byte, n)
	js.CopyBytesToGo(data, u8)
	pos, err := b.w.RestoreState(data)
	if err != nil {
		b.fail(id, err)
		return
	}
	b.reply(id, "restored", map[string]any{"positions": pos})
}

// copyChunk copies a chunk of the model file into the Go buffer, in slices
// of at most 16 MiB (js.CopyBytesToGo needs no temporary copy).
func (b *bridge) copyChunk(id, data js.Value) bool {
	n := data.Get("byteLength").Int()
	const step = 16 << 20
	for off := 0; off < n; off += step {
		end := min(off+step, n)
		dst, err := b.w.Next(end - off)
		if err != nil {
			b.fail(id, err)
			return false
		}
		js.CopyBytesToGo(dst, data.Call("subarray", off, end))
	}
	return true
}

// readBlob loads a Blob (a File, or a cached download) by reading it in
// slices straight into the Go buffer: nothing but one slice is ever held by
// JS, and the page's heap is not involved.
func (b *bridge) readBlob(msg js.Value) {
	id := msg.Get("id")
	var blobs []js.Value
	var fs host.Files
	if bs := msg.Get("blobs"); bs.Type() != js.TypeObject {
		blob := msg.Get("blob")
		blobs, fs = []js.Value{blob}, host.OneFile(msg.Get("name").String(), int64(blob.Get("size").Float()))
	} else {
		names := msg.Get("names")
		for i := range bs.Length() {
			blobs = append(blobs, bs.Index(i))
			fs.Sizes = append(fs.Sizes, int64(bs.Index(i).Get("size").Float()))
			fs.Names = append(fs.Names, strAt(names, i))
		}
	}
	if err := b.w.BeginFiles(msg.Get("name").String(), fs); err != nil {
		b.fail(id, err)
		return
	}
	const step = 8 << 20
	loaded := int64(0)
	for _, blob := range blobs {
		size := int64(blob.Get("size").Float())
		for off := int64(0); off < size; off += step {
			end := min(off+step, size)
			ab, err := await(blob.Call("slice", float64(off), float64(end)).Call("arrayBuffer"))
			if err != nil {
				b.w.Unload()
				b.fail(id, err)
				return
			}
			if !b.copyChunk(id, js.Global().Get("Uint8Array").New(ab)) {
				return
			}
			loaded += end - off
			b.reply(id, "progress", map[string]any{"loaded": float64(loaded)})
		}
	}
	info, err := b.w.Finish()
	b.loaded(id, info, err)
}

// await waits for a promise from a goroutine (never from a js callback).
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	ok := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{v: a[0]}
		return nil
	})
	fail := js.FuncOf(func(_ js.Value, a []js.Value) any {
		ch <- result{err: errors.New(a[0].Call("toString").String())}
		return nil
	})
	defer ok.Release()
	defer fail.Release()
	p.Call("then", ok, fail)
	r := <-ch
	return r.v, r.err
}

func (b *bridge) yield() {
	b.port.Call("postMessage", nil)
	<-b.resume
}

func (b *bridge) generate(msg js.Value) {
	id := msg.Get("id")
	b.started = id.Float()
	if b.stopped[id.Float()] {
		delete(b.stopped, id.Float())
		b.reply(id, "done", map[string]any{"stats": host.Done{Stop: "stopped"}.Map(), "memory": b.memory()})
		return
	}
	b.running = id.Float()
	defer func() { b.running = 0 }()
	r := host.GenerateRequest{
		Prompt:      str(msg.Get("prompt")),
		MaxTokens:   num(msg.Get("maxTokens"), 256),
		Temperature: float32(flt(msg.Get("temperature"), 0.8)),
		TopP:        float32(flt(msg.Get("topP"), 0.9)),
		TopK:        num(msg.Get("topK"), 0),
		MinP:        float32(flt(msg.Get("minP"), 0)),
		Seed:        host.SeedOf(flt(msg.Get("seed"), 42)),
		JSON:        msg.Get("json").Truthy(),
		Grammar:     str(msg.Get("grammar")),
		JSONSchema:  str(msg.Get("jsonSchema")),
		Logprobs:    msg.Get("logprobs").Truthy(),
		TopLogprobs: num(msg.Get("topLogprobs"), 0),
	}
	if ts := msg.Get("tools"); ts.Type() == js.TypeObject {
		for i := range ts.Length() {
			t := ts.Index(i)
			tool := chat.Tool{Name: str(t.Get("name")), Description: str(t.Get("description"))}
			if p := str(t.Get("parameters")); p != "" {
				tool.Parameters = []byte(p)
			}
			r.Tools = append(r.Tools, tool)
		}
	}
	if tc := msg.Get("toolChoice"); tc.Type() == js.TypeObject {
		r.ToolChoice = chat.ToolChoice{Mode: str(tc.Get("mode")), Function: str(tc.Get("function")), Parallel: tc.Get("parallel").Truthy()}
	}
	if st := msg.Get("stop"); st.Type() == js.TypeObject {
		for i := range st.Length() {
			r.Stop = append(r.Stop, str(st.Index(i)))
		}
	}
	if ms := msg.Get("messages"); ms.Type() == js.TypeObject {
		for i := range ms.Length() {
			m := ms.Index(i)
			cm := chat.Message{Role: str(m.Get("role")), Content: str(m.Get("content")), ToolCallID: str(m.Get("toolCallId")), Name: str(m.Get("name"))}
			if tc := m.Get("toolCalls"); tc.Type() == js.TypeObject {
				for k := range tc.Length() {
					c := tc.Index(k)
					cm.ToolCalls = append(cm.ToolCalls, chat.ToolCall{ID: str(c.Get("id")), Name: str(c.Get("name")), Arguments: str(c.Get("arguments"))})
				}
			}
			r.Messages = append(r.Messages, cm)
		}
	}
	last := time.Now()
	var k0, k1 splitCounters // at the start, after the prompt
	prompted := false
	if len(b.peers) > 0 {
		k0 = b.counters()
	}
	var emit time.Duration // in this callback (split stats)
	d, err := b.w.Generate(r, func(t host.Token) bool {
		t0 := time.Now()
		if t.Count >= 1 && !prompted && len(b.peers) > 0 {
			k1, prompted = b.counters(), true
			k1.emit = emit
		}
		m := t.Map()
		m["type"], m["id"] = "token", id
		b.post(m, nil)
		if time.Since(last) >= yieldEvery {
			b.yield()
			last = time.Now()
		}
		emit += time.Since(t0)
		return true
	})
	if err != nil {
		b.fail(id, err)
		return
	}
	stats := d.Map()
	if len(b.peers) > 0 {
		if !prompted {
			k1 = b.counters()
			k1.emit = emit
		}
		k2 := b.counters()
		k2.emit = emit
		stats["split"] = map[string]any{"prefill": splitStats(k0, k1, d.PrefillMs), "decode": splitStats(k1, k2, d.DecodeMs)}
	}
	b.reply(id, "done", map[string]any{"stats": stats, "memory": b.memory()})
}

// strAt is v[i] as a string: "" unless v is an array of more than i
// elements with a string there.
func strAt(v js.Value, i int) string {
	if v.Type() != js.TypeObject || i >= v.Length() {
		return ""
	}
	return str(v.Index(i))
}

// filesOf reads the files of a loadSplit or shard message: the shards of
// a split GGUF (sizes: [n], names: [string]) or one file of size bytes.
func filesOf(msg js.Value, name string, size int64) host.Files {
	sizes := msg.Get("sizes")
	if sizes.Type() != js.TypeObject {
		return host.OneFile(name, size)
	}
	var fs host.Files
	for i := range min(sizes.Length(), 1<<16) {
		fs.Sizes = append(fs.Sizes, int64(flt(sizes.Index(i), 0)))
		fs.Names = append(fs.Names, strAt(msg.Get("names"), i))
	}
	return fs
}

func str(v js.Value) string {
	if v.Type() != js.TypeString {
		return ""
	}
	return v.String()
}

func num(v js.Value, def int) int {
	if v.Type() != js.TypeNumber {
		return def
	}
	return v.Int()
}

func flt(v js.Value, def float64) float64 {
	if v.Type() != js.TypeNumber {
		return def
	}
	return v.Float()
}

// embed answers an embed message: each input's vector (host.Worker.Embed)
// as the bytes of a Float32Array, transferred.
func (b *bridge) embed(msg js.Value) {
	id := msg.Get("id")
	var inputs []host.EmbedInput
	if ins := msg.Get("inputs"); ins.Type() == js.TypeObject {
		for i := range min(ins.Length(), host.MaxEmbedInputs+1) {
			in := ins.Index(i)
			if t := in.Get("tokens"); t.Type() == js.TypeObject {
				toks := make([]int, min(t.Length(), 1<<20))
				for k := range toks {
					toks[k] = num(t.Index(k), -1)
				}
				inputs = append(inputs, host.EmbedInput{Tokens: toks})
			} else {
				inputs = append(inputs, host.EmbedInput{Text: str(in.Get("text")), IsText: true})
			}
		}
	}
	es, err := b.w.Embed(inputs)
	if err != nil {
		b.fail(id, err)
		return
	}
	data, tokens, transfer := make([]any, len(es)), make([]any, len(es)), make([]any, len(es))
	for i, e := range es {
		bs := e.Bytes()
		u := js.Global().Get("Uint8Array").New(len(bs))
		js.CopyBytesToJS(u, bs)
		data[i], tokens[i], transfer[i] = u.Get("buffer"), e.Tokens, u.Get("buffer")
	}
	b.post(map[string]any{"type": "embedded", "id": id, "data": data, "tokens": tokens, "memory": b.memory()}, transfer)
}
