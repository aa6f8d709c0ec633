//go:build js

package main

// A model split over Web Workers (engine.LoadOptions.Parts): the page puts
// the model file in a SharedArrayBuffer that every worker reads (each copies
// only its part out of it, then lets it go), and gives each shard worker a
// channel, another SharedArrayBuffer, shared with the lead. Per group of
// matrix products (engine.Peer) the lead writes the quantized activations
// and the group id into the channel, bumps the request sequence
// (Atomics.store + notify), computes its own rows and waits (Atomics.wait;
// allowed in workers) for the response sequence; the shard, blocked on the
// request sequence, computes its rows and writes them back as float32.
// Go's wasm memory is not shared: the bytes move with js.CopyBytesToGo /
// CopyBytesToJS through Uint8Array views.
//
// Channel layout (Int32 slots, then byte regions):
//
//	0 request sequence (lead)      1 response sequence (shard)
//	2 state: 0 loading, 1 serving, 2 failed (the shard's load failed, or
//	  the page saw its worker die)
//	3 status of the response: 0 ok, 1 error (message at msgOff)
//	4 group id   5 activations   6 bytes per activation   7 floats in the reply
//	8 part   9 parts   10 the shard's wasm memory in 64 KiB pages   11 message length
//	12 the shard's time computing and copying its replies, in µs (wrapping)
//	13 requests served   14 the shard's sleeps (Atomics.wait) waiting for a
//	request   15 the lead's sleeps waiting for a reply (counters for
//	splitStats; each slot has one writer)
//	bytes 64..96 the model identity, 128..1152 the error message,
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
	ixReq, ixResp, ixState, ixStatus    = 0, 1, 2, 3
	ixGroup, ixActs, ixActLen, ixOutLen = 4, 5, 6, 7
	ixPart, ixParts, ixPages, ixMsgLn   = 8, 9, 10, 11
	ixBusy, ixServed, ixShardSleeps     = 12, 13, 14
	ixLeadSleeps                        = 15

	stateLoading, stateServing, stateFailed = 0, 1, 2

	idOff   = 64
	msgOff  = 128
	msgMax  = 1024
	actsOff = 4096
	actsMax = 1 << 20
	outOff  = actsOff + actsMax

	// helloTimeout bounds how long the lead waits for a shard to load;
	// replyTimeout for one product (a shard that died without the page
	// noticing).
	helloTimeout = 5 * time.Minute
	replyTimeout = 2 * time.Minute
)

var errShardDied = errors.New("the shard worker failed")

// channel is one lead–shard channel, as either side sees it. The polling
// and signalling are web/worker.js's picolmChannel (one Go→JS call each).
type channel struct {
	atomics js.Value
	prim    js.Value // picolmChannel
	i32     js.Value // Int32Array over the whole buffer
	head    js.Value // Uint8Array over slots 0..15
	hdr     [64]byte // the slots, as last read
	u8      js.Value // Uint8Array over the whole buffer
	acts    js.Value // Uint8Array over the activations region
	out     js.Value // Uint8Array over the reply region
	outMax  int      // bytes of the reply region
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
		prim:    prim,
		head:    u8.Call("subarray", 0, 64),
		i32:     js.Global().Get("Int32Array").New(sab),
		u8:      u8,
		acts:    u8.Call("subarray", actsOff, outOff),
		out:     u8.Call("subarray", outOff),
		outMax:  n - outOff,
	}, nil
}

func (c *channel) load(i int) int32     { return int32(c.atomics.Call("load", c.i32, i).Int()) }
func (c *channel) store(i int, v int32) { c.atomics.Call("store", c.i32, i, v) }
func (c *channel) notify(i int)         { c.atomics.Call("notify", c.i32, i) }

// await waits while slot i holds v, at most d, and returns the slot: it
// polls for spinMs, then sleeps in Atomics.wait.
func (c *channel) await(i int, v int32, d time.Duration) int32 {
	return int32(c.prim.Call("await", c.i32, i, v, float64(d.Milliseconds()), spinMs).Int())
}

// spinMs is how long a side of a channel polls (ms) before it sleeps in
// Atomics.wait. Waking a thread from Atomics.wait costs a futex wake-up, but
// polling for long loses on a machine whose cores are shared: the poller
// takes the time a computing Worker needs. Measured on a 2-core AMD EPYC
// under a load average of 14 (2026-12-02, TinyLlama-shaped Q4_K_M, 2
// Workers): polling 2 ms for a reply and 1 ms for a request decoded at 0.63
// tok/s, against 1.0–1.2 tok/s polling 0.02 ms; on an idle machine the
// difference is unmeasured (stats.split counts the sleeps).
const spinMs = 0.02

// slots reads slots 0..15 (after an await saw the sequence move, which
// orders the other side's plain writes before it).
func (c *channel) slots() {
	js.CopyBytesToGo(c.hdr[:], c.head)
}

func (c *channel) slot(i int) int32 { return int32(binary.LittleEndian.Uint32(c.hdr[4*i:])) }

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
	u8   js.Value
	size int64
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
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// sabPeer is the lead's side of a channel: an engine.Peer.
type sabPeer struct {
	c   *channel
	seq int32
	out []float32 // the started product's reply

	starts int           // products started
	wait   time.Duration // time in Wait
}

func (p *sabPeer) Info() (engine.ShardInfo, error) {
	deadline := time.Now().Add(helloTimeout)
	for p.c.load(ixState) == stateLoading {
		if time.Now().After(deadline) {
			return engine.ShardInfo{}, errors.New("the shard worker did not load the model in time")
		}
		p.c.await(ixState, stateLoading, 100*time.Millisecond)
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
	p.seq = p.c.load(ixResp)
	return info, nil
}

func (p *sabPeer) Start(group int, acts [][]byte, out []float32) error {
	n := len(acts[0])
	if len(acts)*n > actsMax || 4*len(out) > p.c.outMax {
		return fmt.Errorf("a product of %d activations of %d bytes and %d results does not fit the channel", len(acts), n, len(out))
	}
	if len(acts) == 1 {
		js.CopyBytesToJS(p.c.acts, acts[0])
	} else {
		for b, a := range acts {
			js.CopyBytesToJS(p.c.acts.Call("subarray", b*n), a)
		}
	}
	p.seq++
	p.starts++
	p.out = out
	p.c.prim.Call("request", p.c.i32, group, len(acts), n, len(out), p.seq)
	return nil
}

func (p *sabPeer) Wait() error {
	c := p.c
	start := time.Now()
	defer func() { p.wait += time.Since(start) }()
	deadline := start.Add(replyTimeout)
	for c.await(ixResp, p.seq-1, 100*time.Millisecond) != p.seq {
		if c.load(ixState) != stateServing {
			return errShardDied
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the shard worker did not answer in %v", replyTimeout)
		}
	}
	c.slots()
	if c.slot(ixStatus) != 0 {
		return errors.New(c.message())
	}
	if got := int(c.slot(ixOutLen)); got != len(p.out) {
		return fmt.Errorf("the shard replied %d values, want %d", got, len(p.out))
	}
	js.CopyBytesToGo(quant.F32Bytes(p.out), c.out)
	return nil
}

// loadSplit loads the lead's part: {name, model: SharedArrayBuffer, size,
// channels: [SharedArrayBuffer]}.
func (b *bridge) loadSplit(msg js.Value) {
	id := msg.Get("id")
	size := int64(msg.Get("size").Float())
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
		p := &sabPeer{c: c}
		peers[i] = p
		b.peers = append(b.peers, p)
	}
	r, err := newSABReader(msg.Get("model"), size)
	if err != nil {
		b.w.Unload()
		b.fail(id, err)
		return
	}
	name := str(msg.Get("name"))
	info, err := b.w.LoadSplitFiles(name, r, filesOf(msg, name, size), peers)
	if err != nil {
		b.peers = nil
	}
	b.loaded(id, info, err)
}

// serveShard loads a shard ({model, size, part, parts, channel}) and serves
// the lead's products until the page terminates the worker. It never
// returns to the event loop once serving.
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
	size := int64(msg.Get("size").Float())
	r, err := newSABReader(msg.Get("model"), size)
	if err != nil {
		failed(err)
		return
	}
	sh, err := host.LoadShardFiles(r, filesOf(msg, "the model file", size), msg.Get("part").Int(), msg.Get("parts").Int())
	if err != nil {
		failed(err)
		return
	}
	maxActs, actLen, outLen := sh.Limits()
	if maxActs*actLen > actsMax || 4*outLen > c.outMax {
		failed(fmt.Errorf("the shard channel is too small: %d activations of %d bytes and %d results", maxActs, actLen, outLen))
		return
	}
	r = nil
	msg = js.Undefined() // let the model buffer go
	acts := make([][]byte, maxActs)
	actBuf := make([]byte, maxActs*actLen)
	outBuf := make([]float32, outLen)

	info := sh.Info()
	js.CopyBytesToJS(c.u8.Call("subarray", idOff, idOff+32), info.Identity[:])
	c.store(ixPart, int32(info.Part))
	c.store(ixParts, int32(info.Parts))
	if m := b.memory(); m.Type() == js.TypeObject {
		c.store(ixPages, int32(m.Get("wasmBytes").Int()>>16))
	}
	b.post(map[string]any{"type": "shardReady", "memory": b.memory()}, nil)
	last := c.load(ixReq)
	c.store(ixState, stateServing)
	c.notify(ixState)
	var busy time.Duration
	for {
		for c.await(ixReq, last, time.Second) == last {
		}
		start := time.Now()
		c.slots()
		last = c.slot(ixReq)
		group := int(c.slot(ixGroup))
		n, l, o := int(c.slot(ixActs)), int(c.slot(ixActLen)), int(c.slot(ixOutLen))
		if n >= 1 && n <= maxActs && l >= 0 && l <= actLen && o >= 0 && o <= outLen {
			js.CopyBytesToGo(actBuf[:n*l], c.acts)
			for i := range n {
				acts[i] = actBuf[i*l : (i+1)*l]
			}
			err = sh.Serve(group, acts[:n], outBuf[:o])
		} else {
			err = fmt.Errorf("a request of %d activations of %d bytes and %d results (at most %d, %d, %d)", n, l, o, maxActs, actLen, outLen)
		}
		status := 0
		if err != nil {
			c.setMessage(err)
			status = 1
		} else {
			js.CopyBytesToJS(c.out, quant.F32Bytes(outBuf[:o]))
		}
		busy += time.Since(start)
		c.prim.Call("reply", c.i32, status, o, last, uint32(busy.Microseconds()))
	}
}

// splitCounters is a snapshot of a split model's counters (splitStats).
type splitCounters struct {
	starts      int
	wait        time.Duration
	leadSleeps  int
	busyUs      []uint32 // per shard
	shardSleeps []int32
}

// counters reads the lead's and the shards' counters.
func (b *bridge) counters() splitCounters {
	var k splitCounters
	for _, p := range b.peers {
		k.starts = p.starts
		k.wait += p.wait
		k.leadSleeps += int(p.c.load(ixLeadSleeps))
		k.busyUs = append(k.busyUs, uint32(p.c.load(ixBusy)))
		k.shardSleeps = append(k.shardSleeps, p.c.load(ixShardSleeps))
	}
	return k
}

// splitStats is where the time of a split model went between two
// snapshots: the products started (one synchronisation with every shard
// each), the lead's time waiting for the shards' replies and how often it
// slept (Atomics.wait) doing so, and each shard's time computing and
// copying its replies and how often it slept waiting for a request.
func splitStats(from, to splitCounters) map[string]any {
	busy := make([]any, len(to.busyUs))
	sleeps := make([]any, len(to.busyUs))
	for i := range busy {
		busy[i] = float64(to.busyUs[i]-from.busyUs[i]) / 1000
		sleeps[i] = int(to.shardSleeps[i] - from.shardSleeps[i])
	}
	return map[string]any{
		"syncs":       to.starts - from.starts,
		"leadWaitMs":  float64(to.wait-from.wait) / float64(time.Millisecond),
		"leadSleeps":  to.leadSleeps - from.leadSleeps,
		"shardBusyMs": busy,
		"shardSleeps": sleeps,
	}
}
