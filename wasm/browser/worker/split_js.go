//go:build js

package main

// A model split over Web Workers (engine.LoadOptions.Parts): every Worker
// holds its rows of the model (read by itself, parts_js.go, or copied out
// of a SharedArrayBuffer holding the file) and runs the forward pass over
// them (engine.Shard.Step; the lead's Session), the Workers joined by a
// mesh: one SharedArrayBuffer that all of them share (sabMesh). Each
// shard also has a channel, a SharedArrayBuffer shared with the lead only,
// for its load (its state, what it read, its identity and context, its
// error message) and its counters.
//
// Go's wasm memory is not shared: the bytes move with js.CopyBytesToGo /
// CopyBytesToJS through Uint8Array views made once, and the
// synchronisation of the mesh is web/worker.js's picolmMesh (a JS
// call without arguments each: a call with arguments would box them, an
// allocation per call).
//
// Channel layout (Int32 slots, then byte regions):
//
//	2 state: 0 loading, 1 serving, 2 failed (the shard's load or a step
//	  failed, or the page saw its worker die)
//	3 part   4 parts   5 the shard's wasm memory in 64 KiB pages
//	6 message length   7 the positions the shard's KV cache holds
//	8 the offset in KiB of the read a loading shard is waiting for,
//	  9 its length in KiB + 1 (0: no read pending)
//	15 the KiB of the model the shard has read while loading (wrapping;
//	  the lead's stallWatch)
//	18 the shard's time computing in µs (wrapping; not waiting for the
//	  others or the lead)   20 batches run   21 its time in attention, µs
//	  (counters for splitStats; each slot has one writer)
//	bytes 128..160 the model identity, 256..1280 the error message.
//
// Mesh layout (Int32 slots, then the parts' values):
//
//	0 arrivals: every part adds 1 when it has published an exchange's
//	  values, so the exchange g (from 1) is complete once it reaches g·parts
//	1 failed: set when a part failed or died (every wait ends)
//	64 + 64·parity + part: the bytes part published in an exchange of
//	  that parity (g mod 2)
//	192 + part: the part's sleeps (Atomics.wait) waiting for the others
//	bytes meshData + (parity·parts + part)·area: the part's values.
//
// A part publishes the exchange g+2 into the buffers of g only after every
// part has arrived at g+1, which each does after reading g's values.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"syscall/js"
	"time"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/wasm/browser/host"
)

const (
	ixState, ixPart, ixParts, ixPages, ixMsgLn, ixCtx = 2, 3, 4, 5, 6, 7
	ixReadAt, ixReadLen                               = 8, 9
	ixLoadedKiB, ixBusy, ixServed, ixAttnBusy         = 15, 18, 20, 21

	headSlots = 32

	stateLoading, stateServing, stateFailed = 0, 1, 2

	idOff   = 128
	msgOff  = 256
	msgMax  = 1024
	chanMin = msgOff + msgMax

	meshLens, meshSleeps, meshData = 64, 192, 1024

	// loadStall is how long the lead waits for a loading shard that
	// reads nothing (a read that never completes): a shard that keeps
	// reading is waited for however long its load takes, and one that
	// fails or dies says so in its channel. replyTimeout bounds the
	// lead's wait in one exchange (a shard that died without the page
	// noticing).
	loadStall    = 5 * time.Minute
	replyTimeout = 2 * time.Minute
)

var errShardDied = errors.New("the shard worker failed")

// channel is one lead–shard channel, as either side sees it.
type channel struct {
	atomics js.Value
	i32     js.Value // Int32Array over the whole buffer
	hdr     [4 * headSlots]byte
	u8      js.Value // Uint8Array over the whole buffer
	counts  js.Value // Uint8Array over the counter slots (ixBusy ..)
	loaded  int64    // bytes a loading shard has read (addLoaded)
}

func newChannel(sab js.Value) (*channel, error) {
	n := sab.Get("byteLength").Int()
	if n < chanMin {
		return nil, fmt.Errorf("a shard channel of %d bytes; at least %d needed", n, chanMin)
	}
	u8 := js.Global().Get("Uint8Array").New(sab)
	return &channel{
		atomics: js.Global().Get("Atomics"),
		i32:     js.Global().Get("Int32Array").New(sab),
		u8:      u8,
		counts:  u8.Call("subarray", 4*ixBusy, 4*headSlots),
	}, nil
}

// These are for the slow paths (loading, errors, counters): their
// arguments are boxed.
func (c *channel) load(i int) int32     { return int32(c.atomics.Call("load", c.i32, i).Int()) }
func (c *channel) store(i int, v int32) { c.atomics.Call("store", c.i32, i, v) }
func (c *channel) notify(i int)         { c.atomics.Call("notify", c.i32, i) }

// set writes v into the Go copy of slot i; putCounts copies the counter
// slots [ixBusy, hi) of it into the channel (plain writes: a shard's
// counters, each with one writer, read by the lead when it reports).
func (c *channel) set(i int, v int32) { binary.LittleEndian.PutUint32(c.hdr[4*i:], uint32(v)) }

func (c *channel) putCounts(hi int) { js.CopyBytesToJS(c.counts, c.hdr[4*ixBusy:4*hi]) }

func (c *channel) slot(i int) int32 { return int32(binary.LittleEndian.Uint32(c.hdr[4*i:])) }

// sabMesh is a part's side of the mesh (the layout above): an engine.Mesh.
type sabMesh struct {
	fns         js.Value // picolmMesh.open(sab, parts, part, meshSpinUs, ms): arrive, await
	part, parts int
	gen         int           // exchanges published
	area        int           // bytes of each part's values
	values      [2][]js.Value // [parity][part] Uint8Array over its values
	lenViews    [2][]js.Value // [parity] Uint8Array over the lengths; [parity][part] over part's
	lens        []byte        // the lengths, read
	len4        [4]byte
	failed      js.Value // Int32Array over slot 1 (to fail the mesh)
	sleeps      js.Value // Int32Array over the sleep counters
	// watch, on the lead, is the shards' channels: a wait that times out
	// checks them for a shard that failed or died.
	watch []*channel
}

// meshSpinUs is the longest a Worker polls (µs) in an exchange before it
// sleeps in Atomics.wait; web/worker.js's picolmMesh adapts each part's
// polling between 20 µs and this. Waking a thread from Atomics.wait costs
// a futex wake-up on both sides, so polling pays while the others arrive
// soon: on an idle 2-core AMD EPYC (avx2, avx512_vnni; 2026-12-05,
// TinyLlama-shaped, 2 Workers, 128 tokens, the lead then sending requests
// to the shard over a channel polled the same way) polling 300 µs instead
// of 20 decoded Q4_K_M at 22.3 tok/s instead of 17.2 and Q4_0 at 14.4
// instead of 10.5. But a poller takes the time a computing Worker needs
// when the cores are shared: on a 2-core AMD EPYC under a load average of
// 14 (2026-12-02), polling 2 ms decoded at 0.63 tok/s against 1.0–1.2
// polling 20 µs. Hence the adaptation: a wait that ends long after the
// polling gave up halves it, one that ends soon after lengthens it.
const meshSpinUs = 1000

// meshWaitMs is how long a wait in picolmMesh sleeps before it returns to
// Go to check the deadline and the shards (the lead) or wait on (a shard).
const meshWaitMs = 100

func newMesh(sab js.Value, part, parts int) (*sabMesh, error) {
	n := sab.Get("byteLength").Int()
	area := (n - meshData) / (2 * parts) &^ 63
	if parts < 2 || part < 0 || part >= parts || area < 1<<16 {
		return nil, fmt.Errorf("a mesh of %d bytes for part %d of %d", n, part, parts)
	}
	prim := js.Global().Get("picolmMesh")
	if prim.Type() != js.TypeObject {
		return nil, errors.New("no picolmMesh: the worker script is not web/worker.js")
	}
	u8 := js.Global().Get("Uint8Array").New(sab)
	m := &sabMesh{
		fns:    prim.Call("open", sab, parts, part, meshSpinUs, meshWaitMs),
		part:   part,
		parts:  parts,
		area:   area,
		lens:   make([]byte, 4*parts),
		failed: js.Global().Get("Int32Array").New(sab, 4, 1),
		sleeps: js.Global().Get("Int32Array").New(sab, 4*meshSleeps, parts),
	}
	for par := range 2 {
		m.lenViews[par] = []js.Value{u8.Call("subarray", 4*(meshLens+64*par), 4*(meshLens+64*par+parts))}
		m.lenViews[par] = append(m.lenViews[par], u8.Call("subarray", 4*(meshLens+64*par+part), 4*(meshLens+64*par+part+1)))
		for k := range parts {
			off := meshData + (par*parts+k)*area
			m.values[par] = append(m.values[par], u8.Call("subarray", off, off+area))
		}
	}
	return m, nil
}

func (m *sabMesh) Publish(mine []byte) error {
	if len(mine) > m.area {
		return fmt.Errorf("%d bytes to exchange; the mesh has room for %d per part", len(mine), m.area)
	}
	m.gen++
	par := m.gen & 1
	js.CopyBytesToJS(m.values[par][m.part], mine)
	binary.LittleEndian.PutUint32(m.len4[:], uint32(len(mine)))
	js.CopyBytesToJS(m.lenViews[par][1], m.len4[:])
	m.fns.Call("arrive")
	return nil
}

func (m *sabMesh) Collect(theirs [][]byte) error {
	var deadline time.Time
	for {
		switch m.fns.Call("await").Int() {
		case 0: // complete
		case 1:
			return m.err()
		default: // still waiting
			if m.watch == nil {
				continue // a shard waits for the lead as long as it takes
			}
			if err := m.check(); err != nil {
				m.fail()
				return err
			}
			if deadline.IsZero() {
				deadline = time.Now().Add(replyTimeout)
			} else if time.Now().After(deadline) {
				m.fail()
				return fmt.Errorf("the shard workers did not answer in %v", replyTimeout)
			}
			continue
		}
		break
	}
	par := m.gen & 1
	js.CopyBytesToGo(m.lens, m.lenViews[par][0])
	for k, dst := range theirs {
		if dst == nil || k == m.part {
			continue
		}
		n := int(binary.LittleEndian.Uint32(m.lens[4*k:]))
		if n > cap(dst) {
			return fmt.Errorf("part %d published %d bytes, room for %d", k, n, cap(dst))
		}
		theirs[k] = dst[:n]
		js.CopyBytesToGo(theirs[k], m.values[par][k])
	}
	return nil
}

// fail ends every part's waits (this part failed, or found another dead).
func (m *sabMesh) fail() { m.fns.Call("fail") }

// check reports a shard that failed or died (the lead's).
func (m *sabMesh) check() error {
	for i, c := range m.watch {
		if c.load(ixState) != stateServing {
			if msg := c.message(); msg != "" {
				return fmt.Errorf("shard worker %d: %s", i+1, msg)
			}
			return fmt.Errorf("shard worker %d: %w", i+1, errShardDied)
		}
	}
	return nil
}

// err is why the mesh failed: a shard's message when the lead can see it.
func (m *sabMesh) err() error {
	if err := m.check(); err != nil {
		return err
	}
	return errors.New("a worker of the split model failed")
}

// sleepsOf is how often part k slept waiting in an exchange.
func (m *sabMesh) sleepsOf(k int) int { return m.sleeps.Index(k).Int() }

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

// sabPeer is the lead's view of a shard's channel while it loads: an
// engine.Peer.
type sabPeer struct {
	c     *channel
	part  int // the shard's part (from 1), of parts
	parts int
}

func (p *sabPeer) Info() (engine.ShardInfo, error) {
	watch := newStallWatch(loadStall, p.c.load(ixLoadedKiB), time.Now())
	for p.c.load(ixState) == stateLoading {
		if kib := p.c.load(ixLoadedKiB); watch.stalled(kib, time.Now()) {
			doing := "no read pending"
			if n := p.c.load(ixReadLen); n > 0 {
				doing = fmt.Sprintf("a read of %d KiB at %d MiB pending", n-1, p.c.load(ixReadAt)>>10)
			}
			return engine.ShardInfo{}, fmt.Errorf("shard worker %d of %d read nothing of the model for %v (%d MiB read, %s; it has not said it failed)", p.part, p.parts, loadStall, uint32(kib)>>10, doing)
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
	return info, nil
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
// channels: [SharedArrayBuffer], mesh: SharedArrayBuffer}.
func (b *bridge) loadSplit(msg js.Value) {
	id := msg.Get("id")
	size := int64(flt(msg.Get("size"), 0))
	chans := msg.Get("channels")
	peers := make([]engine.Peer, chans.Length())
	b.peers = b.peers[:0]
	b.mesh = nil
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
	mesh, err := newMesh(msg.Get("mesh"), 0, len(peers)+1)
	if err != nil {
		b.w.Unload()
		b.fail(id, err)
		return
	}
	for _, p := range b.peers {
		mesh.watch = append(mesh.watch, p.c)
	}
	name := str(msg.Get("name"))
	var info host.ModelInfo
	if msg.Get("files").Type() == js.TypeObject { // each Worker reads its own rows (parts_js.go)
		files, fs := filesMsg(msg)
		var r *partsReader
		if r, err = newPartsReader(files, fs); err == nil {
			b.progressEvery(r, id)
			info, err = b.w.LoadPartsFiles(name, prefixesMsg(msg), r, fs, peers, mesh)
			r.release()
		}
	} else {
		var r *sabReader
		if r, err = newSABReader(msg.Get("model"), size); err != nil {
			b.w.Unload()
			b.fail(id, err)
			return
		}
		info, err = b.w.LoadSplitFiles(name, r, filesOf(msg, name, size), peers, mesh)
	}
	if err != nil {
		b.peers = nil
	} else {
		b.mesh = mesh
	}
	b.loaded(id, info, err)
}

// serveShard loads a shard ({model, size, part, parts, channel, mesh}) and
// runs the lead's batches with it until the page terminates the worker. It
// never returns to the event loop once serving.
func (b *bridge) serveShard(msg js.Value) {
	id := msg.Get("id")
	c, err := newChannel(msg.Get("channel"))
	if err != nil {
		b.fail(id, err)
		return
	}
	var mesh *sabMesh
	failed := func(err error) {
		c.setMessage(err)
		c.store(ixState, stateFailed)
		c.notify(ixState)
		if mesh != nil {
			mesh.fail()
		}
		b.fail(id, err)
	}
	if mesh, err = newMesh(msg.Get("mesh"), msg.Get("part").Int(), msg.Get("parts").Int()); err != nil {
		failed(err)
		return
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
		r.onStart = func(off int64, n int) {
			c.store(ixReadAt, int32(off>>10))
			c.store(ixReadLen, int32(n>>10)+1)
		}
		r.onRead = func(n int) { c.store(ixReadLen, 0); c.addLoaded(n); page(n) }
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
	if n := sh.ExchangeBytes(); n > mesh.area {
		failed(fmt.Errorf("the mesh is too small: %d bytes per part, %d needed", mesh.area, n))
		return
	}
	info := sh.Info()
	js.CopyBytesToJS(c.u8.Call("subarray", idOff, idOff+32), info.Identity[:])
	c.store(ixPart, int32(info.Part))
	c.store(ixParts, int32(info.Parts))
	c.store(ixCtx, int32(info.Context))
	if m := b.memory(); m.Type() == js.TypeObject {
		c.store(ixPages, int32(m.Get("wasmBytes").Int()>>16))
	}
	b.post(map[string]any{"type": "shardReady", "memory": b.memory()}, nil)
	c.store(ixState, stateServing)
	c.notify(ixState)
	var busy time.Duration
	for {
		st0 := sh.SplitStats()
		start := time.Now()
		if err := sh.Step(mesh); err != nil {
			failed(err)
			return
		}
		st := sh.SplitStats()
		busy += time.Since(start) - (st.Idle - st0.Idle) - (st.Wait - st0.Wait)
		c.set(ixBusy, int32(uint32(busy.Microseconds())))
		c.set(ixServed, c.slot(ixServed)+1)
		c.set(ixAttnBusy, int32(uint32(st.Attention.Microseconds())))
		c.putCounts(ixAttnBusy + 1)
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
	if b.mesh != nil {
		k.leadSleeps = b.mesh.sleepsOf(0)
	}
	for i, p := range b.peers {
		k.busyUs = append(k.busyUs, uint32(p.c.load(ixBusy)))
		k.attnUs = append(k.attnUs, uint32(p.c.load(ixAttnBusy)))
		sleeps := 0
		if b.mesh != nil {
			sleeps = b.mesh.sleepsOf(i + 1)
		}
		k.shardSleeps = append(k.shardSleeps, int32(sleeps))
	}
	return k
}

// splitStats is where the time of a split model went between two
// snapshots, over elapsed (the prefill's or the decode's time): the
// exchanges (one synchronisation of every Worker each; attention ones of
// them), the lead's time on its own heads' attention, its own rows of the
// other products, publishing its values, waiting for the others' (and
// copying them in), in the token callback (posting each token to the page,
// yielding to the event loop), everything else (embeddings, norms,
// quantization, residuals, sampling: the rest of elapsed) and how often it
// slept (Atomics.wait) waiting; and each shard's time computing (not
// waiting: attention of it) and how often it slept waiting in an exchange
// or for the lead's next batch.
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
