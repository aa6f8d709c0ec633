//go:build js

package main

// A model split over Web Workers (engine.LoadOptions.Parts): the page puts
// the model file in a SharedArrayBuffer that every worker reads (each copies
// only its part out of it, then lets it go), and gives each shard worker a
// channel, another SharedArrayBuffer, shared with the lead. Per step of the
// forward pass (engine.Request: a layer's attention for the shard's heads,
// or its rows of a product group) the lead writes the activations and the
// request into the channel, bumps the request sequence (Atomics.store +
// notify), computes its own share and waits (Atomics.wait; allowed in
// workers) for the response sequence; the shard, blocked on the request
// sequence, computes its share and writes it back as float32. Go's wasm
// memory is not shared: the bytes move with js.CopyBytesToGo /
// CopyBytesToJS through Uint8Array views, and each side's fields are
// written with one CopyBytesToJS before a JS call without arguments
// (web/worker.js's picolmChannel) publishes them: a call with arguments
// would box them, an allocation per call.
//
// Channel layout (Int32 slots, then byte regions):
//
//	0 request sequence (lead)      1 response sequence (shard)
//	2 state: 0 loading, 1 serving, 2 failed (the shard's load failed, or
//	  the page saw its worker die)
//	3 part   4 parts   5 the shard's wasm memory in 64 KiB pages
//	6 message length   7 the positions the shard's KV cache holds
//	8..14 the request (the lead writes it): 8 op, 9 group or layer,
//	  10 first position, 11 activations, 12 bytes per activation,
//	  13 floats in the reply, 14 its sequence
//	15 the KiB of the model the shard has read while loading (wrapping;
//	  the lead's stallWatch)
//	16..19 the reply (the shard): 16 status (0 ok, 1 error, message at
//	  msgOff), 17 floats, 18 the shard's time computing and copying its
//	  replies in µs (wrapping), 19 its sequence
//	20 requests served   21 the shard's time in attention steps, µs
//	22 the shard's sleeps (Atomics.wait) waiting for a request
//	23 the lead's sleeps waiting for a reply (counters for splitStats;
//	  each slot has one writer)
//	24..27 the lead's await arguments (slot, value, ms, µs polling first)
//	28..31 the shard's
//	bytes 128..160 the model identity, 256..1280 the error message,
//	actsOff.. the activations, outOff.. the reply.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall/js"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/wasm/browser/host"
)

const (
	ixReq, ixResp, ixState                   = 0, 1, 2
	ixPart, ixParts, ixPages, ixMsgLn, ixCtx = 3, 4, 5, 6, 7
	ixOp, ixID, ixPos, ixActs, ixActLen      = 8, 9, 10, 11, 12
	ixOutLen, ixReqSeq, ixLoadedKiB          = 13, 14, 15
	ixStatus, ixReplyLen, ixBusy, ixRespSeq  = 16, 17, 18, 19
	ixServed, ixAttnBusy                     = 20, 21
	ixShardSleeps, ixLeadSleeps              = 22, 23
	ixLeadArgs, ixShardArgs                  = 24, 28

	headSlots = 32

	stateLoading, stateServing, stateFailed = 0, 1, 2

	idOff   = 128
	msgOff  = 256
	msgMax  = 1024
	actsOff = 4096
	actsMax = 1 << 20
	outOff  = actsOff + actsMax

	// loadStall is how long the lead waits for a loading shard that
	// reads nothing (a read that never completes): a shard that keeps
	// reading is waited for however long its load takes, and one that
	// fails or dies says so in its channel. replyTimeout bounds one
	// step (a shard that died without the page noticing).
	loadStall    = 5 * time.Minute
	replyTimeout = 2 * time.Minute
)

var errShardDied = errors.New("the shard worker failed")

// channel is one lead–shard channel, as either side sees it. The polling
// and signalling are web/worker.js's picolmChannel.open(sab) (one Go→JS
// call each, without arguments).
type channel struct {
	atomics js.Value
	fns     js.Value // picolmChannel.open(sab): request, reply, leadAwait, shardAwait
	i32     js.Value // Int32Array over the whole buffer
	hdr     [4 * headSlots]byte
	views   [headSlots + 1]js.Value // views[i]: Uint8Array over the slots from i on, made on first use
	u8      js.Value                // Uint8Array over the whole buffer
	acts    js.Value                // Uint8Array over the activations region
	out     js.Value                // Uint8Array over the reply region
	outMax  int                     // bytes of the reply region
	loaded  int64                   // bytes a loading shard has read (addLoaded)
}

func newChannel(sab js.Value) (*channel, error) {
	n := sab.Get("byteLength").Int()
	if n < outOff+4 {
		return nil, fmt.Errorf("a shard channel of %d bytes; at least %d needed", n, outOff+4)
	}
	prim := js.Global().Get("picolmChannel")
	if prim.Type() != js.TypeObject {
		return nil, errors.New("no picolmChannel: the worker script is not web/worker.js")
	}
	u8 := js.Global().Get("Uint8Array").New(sab)
	return &channel{
		atomics: js.Global().Get("Atomics"),
		fns:     prim.Call("open", sab),
		i32:     js.Global().Get("Int32Array").New(sab),
		u8:      u8,
		acts:    u8.Call("subarray", actsOff, outOff),
		out:     u8.Call("subarray", outOff),
		outMax:  n - outOff,
	}, nil
}

// These are for the slow paths (loading, errors, counters): their
// arguments are boxed.
func (c *channel) load(i int) int32     { return int32(c.atomics.Call("load", c.i32, i).Int()) }
func (c *channel) store(i int, v int32) { c.atomics.Call("store", c.i32, i, v) }
func (c *channel) notify(i int)         { c.atomics.Call("notify", c.i32, i) }

// set writes v into the Go copy of slot i; put copies slots [lo, hi) of it
// into the channel (plain writes, published by the atomic store of a
// sequence after them).
func (c *channel) set(i int, v int32) { binary.LittleEndian.PutUint32(c.hdr[4*i:], uint32(v)) }

func (c *channel) put(lo, hi int) {
	js.CopyBytesToJS(c.view(lo), c.hdr[4*lo:4*hi])
}

// get copies slots [lo, hi) of the channel into the Go copy (after an
// await saw the sequence move, which orders the other side's writes
// before it); slot reads them.
func (c *channel) get(lo, hi int) {
	js.CopyBytesToGo(c.hdr[4*lo:4*hi], c.view(lo))
}

func (c *channel) slot(i int) int32 { return int32(binary.LittleEndian.Uint32(c.hdr[4*i:])) }

// view is the Uint8Array over the slots from i on (made once: a subarray
// call boxes its argument).
func (c *channel) view(i int) js.Value {
	if c.views[i].IsUndefined() {
		c.views[i] = c.u8.Call("subarray", 4*i, 4*headSlots)
	}
	return c.views[i]
}

// await waits while slot i holds v, at most d, and returns the slot: it
// polls (at most spinUs, adapted by web/worker.js), then sleeps in
// Atomics.wait. args is the side's argument slots (ixLeadArgs or
// ixShardArgs).
func (c *channel) await(args, i int, v int32, d time.Duration) int32 {
	c.set(args, int32(i))
	c.set(args+1, v)
	c.set(args+2, int32(d.Milliseconds()))
	c.set(args+3, spinUs)
	c.put(args, args+4)
	fn := "leadAwait"
	if args == ixShardArgs {
		fn = "shardAwait"
	}
	return int32(c.fns.Call(fn).Int())
}

// spinUs is the longest a side of a channel polls (µs) before it sleeps in
// Atomics.wait; web/worker.js's picolmChannel adapts each side's polling
// between 20 µs and this. Waking a thread from Atomics.wait costs a futex
// wake-up on both sides (the lead's send, the sleeper's start), so polling
// pays while the other side answers soon: on an idle 2-core AMD EPYC
// (avx2, avx512_vnni; 2026-12-05, TinyLlama-shaped, 2 Workers, 128
// tokens) polling 300 µs instead of 20 decoded Q4_K_M at 22.3 tok/s
// instead of 17.2 and Q4_0 at 14.4 instead of 10.5, the shard sleeping
// before 400 of 11392 requests instead of 10229. But a poller takes the
// time a computing Worker needs when the cores are shared: on a 2-core
// AMD EPYC under a load average of 14 (2026-12-02), polling 2 ms decoded
// at 0.63 tok/s against 1.0–1.2 polling 20 µs. Hence the adaptation: a
// wait that ends long after the polling gave up (the other side was busy
// or descheduled) halves it, one that ends soon after, or while polling,
// lengthens it.
const spinUs = 1000

// addLoaded counts n more bytes of the model read by a loading shard
// (slot ixLoadedKiB, in KiB, wrapping: the lead only watches it move).
func (c *channel) addLoaded(n int) {
	c.loaded += int64(n)
	c.store(ixLoadedKiB, int32(uint32(c.loaded>>10)))
}

func (c *channel) setMessage(err error) {
	b := []byte(err.Error())
	b = b[:min(len(b), msgMax)]
	js.CopyBytesToJS(c.u8.Call("subarray", msgOff, msgOff+msgMax), b)
	c.store(ixMsgLn, int32(len(b)))
}

func (c *channel) message() string {
	n := min(max(int(c.load(ixMsgLn)), 0), msgMax)
	b := make([]byte, n)
	js.CopyBytesToGo(b, c.u8.Call("subarray", msgOff, msgOff+n))
	return string(b)
}

// sabReader reads the model file held in a SharedArrayBuffer.
type sabReader struct {
	u8     js.Value
	size   int64
	onRead func(n int) // after each slice copied, when set
}

func newSABReader(sab js.Value, size int64) (*sabReader, error) {
	if n := int64(sab.Get("byteLength").Float()); n < size {
		return nil, fmt.Errorf("the model buffer has %d bytes, the file %d", n, size)
	}
	return &sabReader{u8: js.Global().Get("Uint8Array").New(sab), size: size}, nil
}

func (r *sabReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-off))
	// In slices: a subarray view costs nothing, and no JS copy is made.
	const step = 64 << 20
	for done := 0; done < n; done += step {
		end := min(done+step, n)
		js.CopyBytesToGo(p[done:end], r.u8.Call("subarray", float64(off)+float64(done), float64(off)+float64(end)))
		if r.onRead != nil {
			r.onRead(end - done)
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// sabPeer is the lead's side of a channel: an engine.Peer.
type sabPeer struct {
	c     *channel
	part  int // the shard's part (from 1), of parts
	parts int
	seq   int32
	out   []float32 // the started step's reply
	stage []byte    // a batch's activations, end to end (one copy into the channel)
}

func (p *sabPeer) Info() (engine.ShardInfo, error) {
	watch := newStallWatch(loadStall, p.c.load(ixLoadedKiB), time.Now())
	for p.c.load(ixState) == stateLoading {
		if kib := p.c.load(ixLoadedKiB); watch.stalled(kib, time.Now()) {
			return engine.ShardInfo{}, fmt.Errorf("shard worker %d of %d read nothing of the model for %v (%d MiB read; it has not said it failed)", p.part, p.parts, loadStall, uint32(kib)>>10)
		}
		// A sleep, not Atomics.wait: the lead's event loop runs while its
		// shards load (its own streams' cancels settle, messages flow).
		time.Sleep(5 * time.Millisecond)
	}
	if p.c.load(ixState) != stateServing {
		if m := p.c.message(); m != "" {
			return engine.ShardInfo{}, errors.New(m)
		}
		return engine.ShardInfo{}, errShardDied
	}
	var info engine.ShardInfo
	js.CopyBytesToGo(info.Identity[:], p.c.u8.Call("subarray", idOff, idOff+32))
	info.Part, info.Parts = int(p.c.load(ixPart)), int(p.c.load(ixParts))
	info.Context = int(p.c.load(ixCtx))
	p.seq = p.c.load(ixResp)
	return info, nil
}

func (p *sabPeer) Start(r engine.Request, out []float32) error {
	c := p.c
	n := len(r.Acts[0])
	if len(r.Acts)*n > actsMax || 4*len(out) > c.outMax {
		return fmt.Errorf("a step of %d activations of %d bytes and %d results does not fit the channel", len(r.Acts), n, len(out))
	}
	if len(r.Acts) == 1 {
		js.CopyBytesToJS(c.acts, r.Acts[0])
	} else {
		if len(p.stage) < len(r.Acts)*n { // in the first prompt batch: then every batch fits
			p.stage = make([]byte, min(max(len(r.Acts), 16)*n, actsMax))
		}
		for b, a := range r.Acts {
			copy(p.stage[b*n:], a)
		}
		js.CopyBytesToJS(c.acts, p.stage[:len(r.Acts)*n])
	}
	p.seq++
	p.out = out
	c.set(ixOp, int32(r.Op))
	c.set(ixID, int32(r.ID))
	c.set(ixPos, int32(r.Pos))
	c.set(ixActs, int32(len(r.Acts)))
	c.set(ixActLen, int32(n))
	c.set(ixOutLen, int32(len(out)))
	c.set(ixReqSeq, p.seq)
	c.put(ixOp, ixReqSeq+1)
	c.fns.Call("request")
	return nil
}

func (p *sabPeer) Wait() error {
	c := p.c
	deadline := time.Now().Add(replyTimeout)
	for c.await(ixLeadArgs, ixResp, p.seq-1, 100*time.Millisecond) != p.seq {
		if c.load(ixState) != stateServing {
			return errShardDied
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the shard worker did not answer in %v", replyTimeout)
		}
	}
	c.get(ixStatus, ixRespSeq+1)
	if c.slot(ixStatus) != 0 {
		return errors.New(c.message())
	}
	if got := int(c.slot(ixReplyLen)); got != len(p.out) {
		return fmt.Errorf("the shard replied %d values, want %d", got, len(p.out))
	}
	js.CopyBytesToGo(quant.F32Bytes(p.out), c.out)
	return nil
}

// plan reports how many Workers the model in msg's SharedArrayBuffer
// ({name, model, size}) divides its attention over (host.SplitWorkers).
func (b *bridge) plan(msg js.Value) {
	id := msg.Get("id")
	size := int64(msg.Get("size").Float())
	name := str(msg.Get("name"))
	r, err := newSABReader(msg.Get("model"), size)
	if err != nil {
		b.fail(id, err)
		return
	}
	n, err := host.SplitWorkers(name, r, size)
	if err != nil {
		b.fail(id, err)
		return
	}
	b.reply(id, "plan", map[string]any{"maxWorkers": n})
}

// loadSplit loads the lead's part: {name, model: SharedArrayBuffer, size,
// channels: [SharedArrayBuffer]}.
func (b *bridge) loadSplit(msg js.Value) {
	id := msg.Get("id")
	size := int64(flt(msg.Get("size"), 0))
	chans := msg.Get("channels")
	peers := make([]engine.Peer, chans.Length())
	b.peers = b.peers[:0]
	for i := range peers {
		c, err := newChannel(chans.Index(i))
		if err != nil {
			b.w.Unload()
			b.fail(id, err)
			return
		}
		p := &sabPeer{c: c, part: i + 1, parts: len(peers) + 1}
		peers[i] = p
		b.peers = append(b.peers, p)
	}
	name := str(msg.Get("name"))
	var info host.ModelInfo
	var err error
	if msg.Get("files").Type() == js.TypeObject { // each Worker reads its own rows (parts_js.go)
		files, fs := filesMsg(msg)
		var r *partsReader
		if r, err = newPartsReader(files, fs); err == nil {
			b.progressEvery(r, id)
			info, err = b.w.LoadPartsFiles(name, prefixesMsg(msg), r, fs, peers)
			r.release()
		}
	} else {
		var r *sabReader
		if r, err = newSABReader(msg.Get("model"), size); err != nil {
			b.w.Unload()
			b.fail(id, err)
			return
		}
		info, err = b.w.LoadSplitFiles(name, r, filesOf(msg, name, size), peers)
	}
	if err != nil {
		b.peers = nil
	}
	b.loaded(id, info, err)
}

// serveShard loads a shard ({model, size, part, parts, channel}) and serves
// the lead's steps until the page terminates the worker. It never returns
// to the event loop once serving.
func (b *bridge) serveShard(msg js.Value) {
	c, err := newChannel(msg.Get("channel"))
	if err != nil {
		b.fail(msg.Get("id"), err)
		return
	}
	failed := func(err error) {
		c.setMessage(err)
		c.store(ixState, stateFailed)
		c.notify(ixState)
		c.notify(ixResp)
		b.fail(msg.Get("id"), err)
	}
	var sh *engine.Shard
	if msg.Get("files").Type() == js.TypeObject { // its own rows only (parts_js.go)
		files, fs := filesMsg(msg)
		r, err := newPartsReader(files, fs)
		if err != nil {
			failed(err)
			return
		}
		b.progressEvery(r, msg.Get("id"))
		page := r.onRead
		r.onRead = func(n int) { c.addLoaded(n); page(n) }
		sh, err = host.LoadShardParts(prefixesMsg(msg), r, fs, msg.Get("part").Int(), msg.Get("parts").Int())
		r.release()
		if err != nil {
			failed(err)
			return
		}
	} else {
		size := int64(msg.Get("size").Float())
		r, err := newSABReader(msg.Get("model"), size)
		if err != nil {
			failed(err)
			return
		}
		r.onRead = c.addLoaded
		if sh, err = host.LoadShardFiles(r, filesOf(msg, "the model file", size), msg.Get("part").Int(), msg.Get("parts").Int()); err != nil {
			failed(err)
			return
		}
	}
	maxActs, actLen, outLen := sh.Limits()
	if maxActs*actLen > actsMax || 4*outLen > c.outMax {
		failed(fmt.Errorf("the shard channel is too small: %d activations of %d bytes and %d results", maxActs, actLen, outLen))
		return
	}
	msg = js.Undefined() // let the model buffer go
	acts := make([][]byte, maxActs)
	actBuf := make([]byte, maxActs*actLen)
	outBuf := make([]float32, outLen)

	info := sh.Info()
	js.CopyBytesToJS(c.u8.Call("subarray", idOff, idOff+32), info.Identity[:])
	c.store(ixPart, int32(info.Part))
	c.store(ixParts, int32(info.Parts))
	c.store(ixCtx, int32(info.Context))
	if m := b.memory(); m.Type() == js.TypeObject {
		c.store(ixPages, int32(m.Get("wasmBytes").Int()>>16))
	}
	b.post(map[string]any{"type": "shardReady", "memory": b.memory()}, nil)
	last := c.load(ixReq)
	c.store(ixState, stateServing)
	c.notify(ixState)
	var busy, attn time.Duration
	for {
		for c.await(ixShardArgs, ixReq, last, time.Second) == last {
		}
		start := time.Now()
		c.get(ixOp, ixReqSeq+1)
		last = c.slot(ixReqSeq)
		req := engine.Request{Op: engine.Op(c.slot(ixOp)), ID: int(c.slot(ixID)), Pos: int(c.slot(ixPos))}
		n, l, o := int(c.slot(ixActs)), int(c.slot(ixActLen)), int(c.slot(ixOutLen))
		if n >= 1 && n <= maxActs && l >= 0 && l <= actLen && o >= 0 && o <= outLen {
			js.CopyBytesToGo(actBuf[:n*l], c.acts)
			for i := range n {
				acts[i] = actBuf[i*l : (i+1)*l]
			}
			req.Acts = acts[:n]
			err = sh.Serve(req, outBuf[:o])
		} else {
			err = fmt.Errorf("a request of %d activations of %d bytes and %d results (at most %d, %d, %d)", n, l, o, maxActs, actLen, outLen)
		}
		status := int32(0)
		if err != nil {
			c.setMessage(err)
			status = 1
		} else {
			js.CopyBytesToJS(c.out, quant.F32Bytes(outBuf[:o]))
		}
		d := time.Since(start)
		busy += d
		if req.Op == engine.OpAttention {
			attn += d
		}
		c.set(ixStatus, status)
		c.set(ixReplyLen, int32(o))
		c.set(ixBusy, int32(uint32(busy.Microseconds())))
		c.set(ixRespSeq, last)
		c.set(ixServed, c.slot(ixServed)+1)
		c.set(ixAttnBusy, int32(uint32(attn.Microseconds())))
		c.put(ixStatus, ixAttnBusy+1)
		c.fns.Call("reply")
	}
}

// splitCounters is a snapshot of a split model's counters (splitStats).
type splitCounters struct {
	lead        engine.SplitStats
	emit        time.Duration // in the generation's token callback: posting tokens, yielding to the event loop
	leadSleeps  int
	busyUs      []uint32 // per shard
	attnUs      []uint32
	shardSleeps []int32
}

// counters reads the lead's and the shards' counters.
func (b *bridge) counters() splitCounters {
	k := splitCounters{lead: b.w.SplitStats()}
	for _, p := range b.peers {
		k.leadSleeps += int(p.c.load(ixLeadSleeps))
		k.busyUs = append(k.busyUs, uint32(p.c.load(ixBusy)))
		k.attnUs = append(k.attnUs, uint32(p.c.load(ixAttnBusy)))
		k.shardSleeps = append(k.shardSleeps, p.c.load(ixShardSleeps))
	}
	return k
}

// splitStats is where the time of a split model went between two
// snapshots, over elapsed (the prefill's or the decode's time): the steps
// started (one synchronisation with every shard each; attention ones of
// them), the lead's time on its own heads' attention, its own rows of the
// other products, sending the requests, waiting for the shards' replies
// (and copying them in), in the token callback (posting each token to the
// page, yielding to the event loop), everything else (norms, quantization,
// residuals, sampling: the rest of elapsed) and how often it slept
// (Atomics.wait) waiting; and each shard's
// time computing and copying its replies (attention of it) and how often
// it slept waiting for a request.
func splitStats(from, to splitCounters, elapsedMs float64) map[string]any {
	to.emit, to.lead.Send = to.emit-from.emit, to.lead.Send-from.lead.Send
	busy := make([]any, len(to.busyUs))
	attn := make([]any, len(to.busyUs))
	sleeps := make([]any, len(to.busyUs))
	for i := range busy {
		busy[i] = float64(to.busyUs[i]-from.busyUs[i]) / 1000
		attn[i] = float64(to.attnUs[i]-from.attnUs[i]) / 1000
		sleeps[i] = int(to.shardSleeps[i] - from.shardSleeps[i])
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	a, p, w := ms(to.lead.Attention-from.lead.Attention), ms(to.lead.Products-from.lead.Products), ms(to.lead.Wait-from.lead.Wait)
	send, emit := ms(to.lead.Send), ms(to.emit)
	return map[string]any{
		"syncs":            to.lead.Syncs - from.lead.Syncs,
		"attentionSyncs":   to.lead.Attentions - from.lead.Attentions,
		"leadAttentionMs":  a,
		"leadProductsMs":   p,
		"leadWaitMs":       w,
		"leadSendMs":       send,
		"leadEmitMs":       emit,
		"leadOtherMs":      max(elapsedMs-a-p-w-send-emit, 0),
		"leadSleeps":       to.leadSleeps - from.leadSleeps,
		"shardBusyMs":      busy,
		"shardAttentionMs": attn,
		"shardSleeps":      sleeps,
	}
}
