package engine

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/synth"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// localPeer is the in-process transport: a Shard served by a goroutine,
// reached over channels (the browser's is a SharedArrayBuffer between Web
// Workers, in wasm/browser/worker).
type localPeer struct {
	sh   *Shard
	info ShardInfo
	req  chan localReq
	done chan error
}

type localReq struct {
	r   Request
	out []float32
}

func newLocalPeer(t testing.TB, sh *Shard) *localPeer {
	p := &localPeer{sh: sh, info: sh.Info(), req: make(chan localReq, 1), done: make(chan error, 1)}
	go func() {
		for r := range p.req {
			p.done <- sh.Serve(r.r, r.out)
		}
		close(p.done)
	}()
	t.Cleanup(p.close)
	return p
}

var errPeerClosed = errors.New("peer closed")

func (p *localPeer) Info() (ShardInfo, error) { return p.info, nil }

func (p *localPeer) Start(r Request, out []float32) (err error) {
	defer func() {
		if recover() != nil { // sending on the closed channel: the peer is gone
			err = errPeerClosed
		}
	}()
	p.req <- localReq{r, out}
	return nil
}

func (p *localPeer) Wait() error {
	err, ok := <-p.done
	if !ok {
		return errPeerClosed
	}
	return err
}

func (p *localPeer) close() {
	defer func() { recover() }() // closed already
	close(p.req)
}

// loadPart loads part k of n of the file at path through a reader (the
// header parsed alone, each tensor's bytes read as needed), as the browser's
// instances do from a SharedArrayBuffer.
func loadPart(t testing.TB, path string, k, n int) *Model {
	t.Helper()
	fh, size := readerOf(t, path)
	f, err := gguf.ParseHeader(fh, size)
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadWith(f, LoadOptions{Data: fh, Part: k, Parts: n})
	if err != nil {
		t.Fatalf("%s part %d of %d: %v", path, k, n, err)
	}
	if (m.Tokenizer == nil) != (k > 0) { // only the lead tokenizes
		t.Fatalf("%s part %d of %d: tokenizer %v", path, k, n, m.Tokenizer)
	}
	return m
}

// newTestShard serves m with the context ctx.
func newTestShard(t testing.TB, m *Model, ctx int) *Shard {
	t.Helper()
	sh, err := NewShard(m, SessionOptions{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return sh
}

// splitSession loads the file at path in n parts and returns a session of
// the lead with the others as in-process peers, and the shards.
func splitSession(t testing.TB, path string, n, threads int) (*Session, []*Model, []*Shard) {
	t.Helper()
	ms := []*Model{loadPart(t, path, 0, n)}
	var peers []Peer
	var shards []*Shard
	for k := n - 1; k >= 1; k-- { // any order
		m := loadPart(t, path, k, n)
		ms = append(ms, m)
		sh := newTestShard(t, m, 128)
		shards = append(shards, sh)
		peers = append(peers, newLocalPeer(t, sh))
	}
	return newSession(t, ms[0], SessionOptions{Context: 128, Threads: threads, Peers: peers}), ms, shards
}

// run prefills prompt then decodes greedily for gen tokens, returning every
// logits vector (copied) and the tokens.
func runGreedy(t testing.TB, s *Session, prompt []int, gen int) ([][]float32, []int) {
	t.Helper()
	var all [][]float32
	var toks []int
	logits, err := s.Prefill(prompt)
	for i := 0; ; i++ {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, append([]float32(nil), logits...))
		if i == gen {
			break
		}
		id := 0
		for j, v := range logits {
			if v > logits[id] {
				id = j
			}
		}
		toks = append(toks, id)
		logits, err = s.Forward(id)
	}
	return all, toks
}

// TestSplitMatchesWhole: a model split over 2, 3 and 4 instances (the lead and
// in-process Shards) gives bit-identical logits and so identical greedy
// tokens to the whole model, through prefill batches (prompt across batch
// boundaries) and decoding, on the f32 and q8_0 stories models (the q8_0
// one has a flat-stored ffn_down), small quantized models (one whose q, k
// and v take two activation formats) and the synthetic architectures (fused
// QKV and FFN, biases, tied output).
func TestSplitMatchesWhole(t *testing.T) {
	dir := t.TempDir()
	paths := map[string]string{
		"stories260K-f32":  shareddata.Path(t, "stories260K.gguf"),
		"stories260K-q8_0": shareddata.Path(t, "tinyllamas-stories-260k-q8_0.gguf"),
		"synth-Q4_K_M":     shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf"),
	}
	for _, typ := range []string{"Q4_0", "Q6_K"} {
		sp := synth.Spec{Name: "small-" + typ, Shape: synth.Small, Seed: 5, Type: typ, Vocab: "ggml-vocab-llama-spm.gguf"}
		sp.Shape.Layers = 2
		writeSpecModel(t, dir, sp)
		paths[sp.Name] = filepath.Join(dir, sp.Name+".gguf")
	}
	// Rows of 128 make Q5_K_M fall back to Q5_1 (Q8_1 activations) and, for
	// layer 1's wv, Q6_K to Q8_0 (Q8_0 activations): a product of two groups.
	mixed := synth.Spec{Name: "mixed-Q5_K_M", Shape: synth.Shape{Embd: 128, Layers: 2, Heads: 4, KVHeads: 2, FF: 256, Context: 256},
		Seed: 5, Type: "Q5_K_M", Vocab: "ggml-vocab-llama-spm.gguf"}
	if m := writeSpecModel(t, dir, mixed); len(m.layers[1].qkv) != 2 || len(m.layers[0].qkv) != 1 {
		t.Fatalf("%s: q, k, v in %d and %d groups, want 1 and 2", mixed.Name, len(m.layers[0].qkv), len(m.layers[1].qkv))
	}
	paths[mixed.Name] = filepath.Join(dir, mixed.Name+".gguf")
	// Three KV heads (of two query heads each): 2 parts divide them 1 and
	// 2, and a 4th part has none.
	gqa3 := synth.Spec{Name: "gqa3-Q8_0", Shape: synth.Shape{Embd: 192, Layers: 2, Heads: 6, KVHeads: 3, FF: 384, Context: 256},
		Seed: 7, Type: "Q8_0", Vocab: "ggml-vocab-llama-spm.gguf"}
	writeSpecModel(t, dir, gqa3)
	paths[gqa3.Name] = filepath.Join(dir, gqa3.Name+".gguf")
	for _, r := range readSynthRefs(t, "arch-refs.jsonl", 10) {
		if _, ok := paths[r.Model]; !ok {
			writeArchModel(t, dir, r)
			paths[r.Model] = filepath.Join(dir, r.Model+".gguf")
		}
	}
	for name, path := range paths {
		whole := loadPath(t, path)
		vocab := whole.Config.VocabSize
		prompt := make([]int, maxBatch+5)
		for i := range prompt {
			prompt[i] = (i*7919 + 13) % vocab
		}
		want, wantToks := runGreedy(t, newSession(t, whole, SessionOptions{Context: 128, Threads: 1}), prompt, 6)
		for _, n := range []int{2, 3, 4} {
			for _, threads := range testThreads() {
				s, ms, shards := splitSession(t, path, n, threads)
				if ms[0].Identity() != whole.Identity() {
					t.Fatalf("%s: the reader-loaded identity differs from the mapped file's", name)
				}
				got, gotToks := runGreedy(t, s, prompt, 6)
				for i := range want {
					for j := range want[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("%s in %d parts, %d threads: step %d logit %d = %g, whole model %g", name, n, threads, i, j, got[i][j], want[i][j])
						}
					}
				}
				if !slices.Equal(gotToks, wantToks) {
					t.Fatalf("%s in %d parts: tokens %v, want %v", name, n, gotToks, wantToks)
				}
				checkPartsCover(t, name, whole, ms)
				checkHeadsCover(t, name, whole, s, shards)
			}
		}
	}
}

// checkPartsCover: the parts hold every row of every matrix exactly once
// (the model exists once in total), and nothing else but the lead's
// embeddings.
func checkPartsCover(t *testing.T, name string, whole *Model, ms []*Model) {
	t.Helper()
	for id, g := range whole.groups {
		for i, w := range g.mats {
			rows, bytes := 0, 0
			for _, m := range ms {
				p := m.groups[id].mats[i]
				lo, hi := w.partOf(m.part, len(ms))
				if p.lo != lo || p.hi != hi || p.rows != w.rows || m.groups[id].id != id {
					t.Fatalf("%s: part %d of matrix %d of group %d holds rows [%d, %d) of %d, want [%d, %d) of %d", name, m.part, i, id, p.lo, p.hi, p.rows, lo, hi, w.rows)
				}
				rows += p.hi - p.lo
				if m.part == 0 && p == &m.output && whole.Config.TiedOutput {
					bytes += (p.hi - p.lo) * p.rowBytes // a view of the embeddings
					continue
				}
				bytes += len(p.data)
			}
			if rows != w.rows || bytes != len(w.data) {
				t.Fatalf("%s: matrix %d of group %d: the parts hold %d rows and %d bytes, the whole %d and %d", name, i, id, rows, bytes, w.rows, len(w.data))
			}
		}
	}
	for _, m := range ms[1:] {
		if m.tokEmbd.data != nil {
			t.Fatalf("%s: part %d holds the embeddings", name, m.part)
		}
	}
}

// checkHeadsCover: the lead and the shards compute attention for every KV
// head exactly once, in order, and keep only those heads' KV cache (the
// cache exists once in total); the q, k and v rows a part holds are its
// heads'.
func checkHeadsCover(t *testing.T, name string, whole *Model, lead *Session, shards []*Shard) {
	t.Helper()
	c := &whole.Config
	ss := []*Session{lead}
	for _, sh := range shards {
		ss = append(ss, sh.s)
	}
	heads, cache := make([]int, len(ss)), 0
	for _, s := range ss {
		p := s.m.part
		if heads[p] != 0 {
			t.Fatalf("%s: two sessions of part %d", name, p)
		}
		heads[p] = s.kvHi - s.kvLo
		lo, hi := partHeads(c.KVHeads, p, len(ss))
		L := &s.m.layers[0]
		if s.kvLo != lo || s.kvHi != hi || L.wk.lo != lo*c.HeadDim || L.wk.hi != hi*c.HeadDim ||
			L.wq.lo != lo*c.KVMul*c.HeadDim || L.wq.hi != hi*c.KVMul*c.HeadDim || s.kvDim != (hi-lo)*c.HeadDim {
			t.Fatalf("%s: part %d of %d: KV heads [%d, %d), wk rows [%d, %d), wq rows [%d, %d); want heads [%d, %d)",
				name, p, len(ss), s.kvLo, s.kvHi, L.wk.lo, L.wk.hi, L.wq.lo, L.wq.hi, lo, hi)
		}
		cache += len(s.keyCache) + len(s.valCache)
	}
	if want := 2 * c.Layers * lead.ctx * c.KVDim; cache != want {
		t.Fatalf("%s in %d parts: %d cached values in all, the whole model's cache holds %d", name, len(ss), cache, want)
	}
}

// TestSplitAllocs: decoding through in-process peers allocates nothing per
// token on the lead.
func TestSplitAllocs(t *testing.T) {
	s, _, _ := splitSession(t, shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf"), 2, 1)
	if _, err := s.Prefill([]int{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	tok := 5
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := s.Forward(tok); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per token", allocs)
	}
}

// liarPeer reports a ShardInfo of its choosing over a real shard.
type liarPeer struct {
	*localPeer
	info ShardInfo
	err  error
}

func (p *liarPeer) Info() (ShardInfo, error) { return p.info, p.err }

// TestSplitMismatch: parts that do not fit together are refused with
// ErrShard when the session is made, and a part that fails or lies while
// serving makes Forward and Prefill fail (every call after too), never
// hang or panic.
func TestSplitMismatch(t *testing.T) {
	path := shareddata.Path(t, "stories260K.gguf")
	other := shareddata.Path(t, "tinyllamas-stories-260k-q8_0.gguf")
	lead := loadPart(t, path, 0, 2)
	shard := func(path string, k, n int) *Shard { return newTestShard(t, loadPart(t, path, k, n), 32) }
	good := func() *localPeer { return newLocalPeer(t, shard(path, 1, 2)) }
	newErr := func(what string, m *Model, peers ...Peer) {
		t.Helper()
		s, err := m.NewSession(SessionOptions{Context: 32, Peers: peers})
		if !errors.Is(err, ErrShard) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("%s: NewSession error %v, want ErrShard", what, err)
		}
	}
	newErr("no peers", lead)
	newErr("two peers for two parts", lead, good(), good())
	newErr("another model's part", lead, newLocalPeer(t, shard(other, 1, 2)))
	newErr("part 1 of 3", lead, newLocalPeer(t, shard(path, 1, 3)))
	newErr("a peer that cannot say", lead, &liarPeer{good(), ShardInfo{}, errors.New("gone")})
	newErr("a nil peer", lead, nil)
	newErr("a shard model as the lead", loadPart(t, path, 1, 2), good())
	newErr("a whole model with a peer", loadModel(t, "stories260K.gguf"), good())
	newErr("two peers for part 1", loadPart(t, path, 0, 3), newLocalPeer(t, shard(path, 1, 3)), newLocalPeer(t, shard(path, 1, 3)))
	newErr("a part with another context", lead, newLocalPeer(t, newTestShard(t, loadPart(t, path, 1, 2), 64)))
	if _, err := NewShard(lead, SessionOptions{}); !errors.Is(err, ErrShard) {
		t.Fatalf("NewShard of the lead: %v", err)
	}
	if _, err := NewShard(loadPart(t, path, 1, 2), SessionOptions{Peers: []Peer{good()}}); !errors.Is(err, ErrShard) {
		t.Fatalf("NewShard with peers: %v", err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, o := range []LoadOptions{{Part: 2, Parts: 2}, {Part: -1, Parts: 2}, {Part: 1}, {Parts: 1000}} {
		if _, err := LoadWith(f, o); !errors.Is(err, ErrShard) {
			t.Fatalf("LoadWith(%+v): %v", o, err)
		}
	}
	h, err := gguf.ParseHeader(readerOf(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadWith(h, LoadOptions{Part: 0, Parts: 2}); !errors.Is(err, ErrMissing) {
		t.Fatalf("a header without a reader: %v", err)
	}

	// Failures while serving.
	serveErr := func(what string, peer Peer) {
		t.Helper()
		s := newSession(t, lead, SessionOptions{Context: 32, Peers: []Peer{peer}})
		if _, err := s.Prefill([]int{1, 2, 3}); !errors.Is(err, ErrShard) {
			t.Fatalf("%s: Prefill error %v, want ErrShard", what, err)
		}
		if _, err := s.Forward(1); !errors.Is(err, ErrShard) {
			t.Fatalf("%s: then Forward error %v, want ErrShard", what, err)
		}
	}
	// Part 2 of 3 claiming to be part 1 of 2: its replies have the wrong length.
	sh := shard(path, 1, 3)
	serveErr("a part that lies", &liarPeer{newLocalPeer(t, sh), ShardInfo{Identity: lead.Identity(), Part: 1, Parts: 2, Context: 32}, nil})
	dead := good()
	s := newSession(t, lead, SessionOptions{Context: 32, Peers: []Peer{dead}})
	if _, err := s.Prefill([]int{1, 2}); err != nil {
		t.Fatal(err)
	}
	dead.close()
	if _, err := s.Forward(1); !errors.Is(err, ErrShard) {
		t.Fatalf("a peer that died: Forward error %v, want ErrShard", err)
	}

	// Bad requests to a shard.
	sh = shard(path, 1, 2)
	g := &sh.m.groups[0] // wq, wk, wv
	act := make([]byte, actBytes(g.mats[0]))
	out := make([]float32, g.replyRows(1, 2))
	cfg := &sh.m.Config
	in := make([]byte, 4*cfg.Dim) // an attention input
	heads := make([]float32, sh.s.qDim)
	prod := func(group int, acts ...[]byte) Request { return Request{Op: OpProduct, ID: group, Acts: acts} }
	attn := func(layer, pos int, acts ...[]byte) Request {
		return Request{Op: OpAttention, ID: layer, Pos: pos, Acts: acts}
	}
	for _, c := range []struct {
		what string
		r    Request
		out  []float32
	}{
		{"group -1", prod(-1, act), out},
		{"a group past the last", prod(len(sh.m.groups), act), out},
		{"no activation", prod(0), out[:0]},
		{"17 activations", prod(0, make([][]byte, 17)...), make([]float32, 17*len(out))},
		{"a short activation", prod(0, act[1:]), out},
		{"a short reply", prod(0, act), out[1:]},
		{"a reply for wq's rows alone", prod(0, act), out[:g.mats[0].hi-g.mats[0].lo]},
		{"a reply for one activation of two", prod(0, act, act), out},
		{"an unknown operation", Request{Op: 7, Acts: [][]byte{act}}, out},
		{"layer -1", attn(-1, 0, in), heads},
		{"a layer past the last", attn(cfg.Layers, 0, in), heads},
		{"position -1", attn(0, -1, in), heads},
		{"a position past the context", attn(0, 32, in), heads},
		{"a batch past the context", attn(0, 31, in, in), append(heads, heads...)},
		{"a short attention input", attn(0, 0, in[4:]), heads},
		{"a short attention reply", attn(0, 0, in), heads[1:]},
	} {
		if err := sh.Serve(c.r, c.out); !errors.Is(err, ErrShard) {
			t.Fatalf("Serve with %s: %v", c.what, err)
		}
	}
	if err := sh.Serve(prod(0, act), out); err != nil {
		t.Fatal(err)
	}
	if err := sh.Serve(attn(0, 31, in), heads); err != nil {
		t.Fatal(err)
	}
}

// readerOf opens the file at path for the test and returns it with its size.
func readerOf(t testing.TB, path string) (*os.File, int64) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return fh, st.Size()
}

// countingPeer records the steps the lead asks a peer for.
type countingPeer struct {
	*localPeer
	steps []string
}

func (p *countingPeer) Start(r Request, out []float32) error {
	p.steps = append(p.steps, stepName(r.Op, r.ID, r.Pos, len(r.Acts)))
	return p.localPeer.Start(r, out)
}

func stepName(op Op, id, pos, acts int) string {
	if op == OpAttention {
		return fmt.Sprintf("attention %d at %d x%d", id, pos, acts)
	}
	return fmt.Sprintf("group %d x%d", id, acts)
}

// TestSplitRequests: per layer the lead asks each peer for its heads'
// attention (one request for q, k, v and the attention), then once per
// group of the other products, in the order of the groups' ids (wo,
// gate+up, down; then output), with the batch's activations: a decoded
// token is a batch of one, a prompt of maxBatch+3 tokens a batch of
// maxBatch and one of 3. SplitStats counts the same steps.
func TestSplitRequests(t *testing.T) {
	path := shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf")
	lead := loadPart(t, path, 0, 2)
	p := &countingPeer{localPeer: newLocalPeer(t, newTestShard(t, loadPart(t, path, 1, 2), 64))}
	s := newSession(t, lead, SessionOptions{Context: 64, Peers: []Peer{p}})
	layers := len(lead.layers)
	if len(lead.groups) != 4*layers+1 {
		t.Fatalf("%d groups for %d layers", len(lead.groups), layers)
	}
	for l := range lead.layers {
		L := &lead.layers[l]
		for i, pr := range []product{L.qkv, L.attnOut, L.gateUp, L.ffnOut} {
			if len(pr) != 1 || pr[0].id != 4*l+i {
				t.Fatalf("layer %d product %d: groups %v", l, i, pr)
			}
		}
	}
	var last SplitStats
	check := func(what string, pos int, batches ...int) {
		t.Helper()
		var want []string
		for _, n := range batches {
			for l := range layers {
				want = append(want, stepName(OpAttention, l, pos, n))
				for i := 1; i < 4; i++ {
					want = append(want, stepName(OpProduct, 4*l+i, 0, n))
				}
			}
			pos += n
		}
		want = append(want, stepName(OpProduct, 4*layers, 0, 1)) // the logits of the last position
		if !slices.Equal(p.steps, want) {
			t.Fatalf("%s: steps\n%v\nwant\n%v", what, p.steps, want)
		}
		st := s.SplitStats()
		if st.Syncs-last.Syncs != len(want) || st.Attentions-last.Attentions != layers*len(batches) || st.Wait <= last.Wait {
			t.Fatalf("%s: stats %+v after %+v, for %d steps", what, st, last, len(want))
		}
		last = st
		p.steps = p.steps[:0]
	}
	prompt := make([]int, maxBatch+3)
	for i := range prompt {
		prompt[i] = 1 + i
	}
	if _, err := s.Prefill(prompt); err != nil {
		t.Fatal(err)
	}
	check("prefill", 0, maxBatch, 3)
	if _, err := s.Forward(7); err != nil {
		t.Fatal(err)
	}
	check("a token", maxBatch+3, 1)
}

// TestSwiGLUPart: silu(gate)·up of any slice of a row, computed by
// swigluPart, is the whole row's quant.SwiGLU bit for bit: slices inside
// the row's blocks of 16, across their end, in the tail, and short ones.
func TestSwiGLUPart(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		n := 1 + rng.IntN(100)
		gate, up := make([]float32, n), make([]float32, n)
		for i := range gate {
			gate[i] = float32(rng.NormFloat64() * 3)
			up[i] = float32(rng.NormFloat64())
		}
		lo := rng.IntN(n)
		hi := lo + 1 + rng.IntN(n-lo)
		g, u := append([]float32(nil), gate[lo:hi]...), append([]float32(nil), up[lo:hi]...)
		swigluPart(g, u, lo, n)
		quant.SwiGLU(gate, up)
		for i, v := range g {
			if math.Float32bits(v) != math.Float32bits(gate[lo+i]) {
				t.Fatalf("row of %d, values %d..%d: [%d] %g, the whole row's %g", n, lo, hi-1, lo+i, v, gate[lo+i])
			}
		}
	}
}
