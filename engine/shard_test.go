package engine

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/tools/synth"
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
	id, n int
	acts  [][]byte
	out   []float32
}

func newLocalPeer(t testing.TB, sh *Shard) *localPeer {
	p := &localPeer{sh: sh, info: sh.Info(), req: make(chan localReq, 1), done: make(chan error, 1)}
	go func() {
		for r := range p.req {
			p.done <- sh.Serve(r.id, r.n, r.acts, r.out)
		}
		close(p.done)
	}()
	t.Cleanup(p.close)
	return p
}

var errPeerClosed = errors.New("peer closed")

func (p *localPeer) Info() (ShardInfo, error) { return p.info, nil }

func (p *localPeer) Start(id, n int, acts [][]byte, out []float32) (err error) {
	defer func() {
		if recover() != nil { // sending on the closed channel: the peer is gone
			err = errPeerClosed
		}
	}()
	p.req <- localReq{id, n, acts, out}
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
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	st, err := fh.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.ParseHeader(fh, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadWith(f, LoadOptions{Data: fh, Part: k, Parts: n})
	if err != nil {
		t.Fatalf("%s part %d of %d: %v", path, k, n, err)
	}
	return m
}

// loadPath loads the whole model at path through gguf.Open (a mapping).
func loadPath(t testing.TB, path string) *Model {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// splitSession loads the file at path in n parts and returns a session of
// the lead with the others as in-process peers.
func splitSession(t testing.TB, path string, n, threads int) (*Session, []*Model) {
	t.Helper()
	ms := []*Model{loadPart(t, path, 0, n)}
	var peers []Peer
	for k := n - 1; k >= 1; k-- { // any order
		m := loadPart(t, path, k, n)
		ms = append(ms, m)
		sh, err := NewShard(m)
		if err != nil {
			t.Fatal(err)
		}
		peers = append(peers, newLocalPeer(t, sh))
	}
	return newSession(t, ms[0], SessionOptions{Context: 128, Threads: threads, Peers: peers}), ms
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

// TestSplitMatchesWhole: a model split over 2 and 3 instances (the lead and
// in-process Shards) gives bit-identical logits and so identical greedy
// tokens to the whole model, through prefill batches (prompt across batch
// boundaries) and decoding, on the f32 and q8_0 stories models (the q8_0
// one has a flat-stored ffn_down), small quantized models and the synthetic
// architectures (fused QKV and FFN, biases, tied output).
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
	for _, r := range readArchRefs(t) {
		if _, ok := paths[r.Model]; !ok {
			writeArchModel(t, dir, r)
			paths[r.Model] = filepath.Join(dir, r.Model+".gguf")
		}
	}
	for name, path := range paths {
		whole := loadPath(t, path)
		vocab := whole.Config.VocabSize
		prompt := make([]int, prefillBatch+5)
		for i := range prompt {
			prompt[i] = (i*7919 + 13) % vocab
		}
		want, wantToks := runGreedy(t, newSession(t, whole, SessionOptions{Context: 128, Threads: 1}), prompt, 6)
		for _, n := range []int{2, 3} {
			for _, threads := range []int{1, 2} {
				s, ms := splitSession(t, path, n, threads)
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
			}
		}
	}
}

// checkPartsCover: the parts hold every row of every matrix exactly once
// (the model exists once in total), and nothing else but the lead's
// embeddings.
func checkPartsCover(t *testing.T, name string, whole *Model, ms []*Model) {
	t.Helper()
	for id, w := range whole.mats {
		rows, bytes := 0, 0
		for _, m := range ms {
			p := m.mats[id]
			lo, hi := partRows(w.rows, m.part, len(ms))
			if p.lo != lo || p.hi != hi || p.rows != w.rows || p.id != id {
				t.Fatalf("%s: part %d of matrix %d holds rows [%d, %d) of %d, want [%d, %d) of %d", name, m.part, id, p.lo, p.hi, p.rows, lo, hi, w.rows)
			}
			rows += p.hi - p.lo
			if m.part == 0 && whole.Config.TiedOutput && id == len(whole.mats)-1 {
				bytes += (p.hi - p.lo) * p.rowBytes // a view of the embeddings
				continue
			}
			bytes += len(p.data)
		}
		if rows != w.rows || bytes != len(w.data) {
			t.Fatalf("%s: matrix %d: the parts hold %d rows and %d bytes, the whole %d and %d", name, id, rows, bytes, w.rows, len(w.data))
		}
	}
	for _, m := range ms[1:] {
		if m.tokEmbd.data != nil {
			t.Fatalf("%s: part %d holds the embeddings", name, m.part)
		}
	}
}

// TestSplitAllocs: decoding through in-process peers allocates nothing per
// token on the lead.
func TestSplitAllocs(t *testing.T) {
	s, _ := splitSession(t, shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf"), 2, 1)
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
	shard := func(path string, k, n int) *Shard {
		sh, err := NewShard(loadPart(t, path, k, n))
		if err != nil {
			t.Fatal(err)
		}
		return sh
	}
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
	if _, err := NewShard(lead); !errors.Is(err, ErrShard) {
		t.Fatalf("NewShard of the lead: %v", err)
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
	serveErr("a part that lies", &liarPeer{newLocalPeer(t, sh), ShardInfo{Identity: lead.Identity(), Part: 1, Parts: 2}, nil})
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
	w := sh.m.mats[0]
	act := make([]byte, actBytes(w))
	out := make([]float32, w.hi-w.lo)
	last := len(sh.m.mats) - 1
	for _, c := range []struct {
		what  string
		id, n int
		acts  [][]byte
		out   []float32
	}{
		{"matrix -1", -1, 1, [][]byte{act}, out},
		{"a matrix past the last", last + 1, 1, [][]byte{act}, out},
		{"no matrix", 0, 0, [][]byte{act}, out},
		{"matrices past the last", last, 2, [][]byte{act}, out},
		{"wv and wo with a reply for wq's rows", 2, 2, [][]byte{act}, out},
		{"up and down (they take different activations)", 5, 2, [][]byte{act}, out},
		{"no activation", 0, 1, nil, out[:0]},
		{"17 activations", 0, 1, make([][]byte, 17), make([]float32, 17*len(out))},
		{"a short activation", 0, 1, [][]byte{act[1:]}, out},
		{"a short reply", 0, 1, [][]byte{act}, out[1:]},
		{"a reply for one matrix of three", 0, 3, [][]byte{act}, out},
	} {
		if err := sh.Serve(c.id, c.n, c.acts, c.out); !errors.Is(err, ErrShard) {
			t.Fatalf("Serve with %s: %v", c.what, err)
		}
	}
	if err := sh.Serve(0, 1, [][]byte{act}, out); err != nil {
		t.Fatal(err)
	}
}

func readerOf(t *testing.T, path string) (*os.File, int64) {
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

// TestSplitGroupReplies: the peers' rows of wk and wv come with wq's
// request, and are used only for the activation they were computed for: a
// product of wk on another activation asks the peers again.
func TestSplitGroupReplies(t *testing.T) {
	path := shareddata.Path(t, "synth/synth-small-Q4_K_M.gguf")
	whole := newSession(t, loadPath(t, path), SessionOptions{Context: 32})
	split, _ := splitSession(t, path, 2, 1)
	if g := split.m.groups; g[0] != 3 || g[4] != 2 || g[3] != 1 {
		t.Fatalf("groups %v", g[:7])
	}
	c := &whole.m.Config
	x1, x2 := make([]float32, c.Dim), make([]float32, c.Dim)
	for i := range x1 {
		x1[i] = float32(i%7) - 3
		x2[i] = float32(i%5) - 2
	}
	steps := []struct {
		x  []float32
		id int
	}{{x1, 0}, {x1, 1}, {x2, 2}, {x2, 1}, {x1, 2}, {x2, 0}, {x2, 2}, {x2, 5}, {x1, 4}, {x1, 5}}
	for i, st := range steps {
		for _, s := range []*Session{whole, split} {
			s.act.set(st.x)
		}
		w1, w2 := whole.m.mats[st.id], split.m.mats[st.id]
		want, got := make([]float32, w1.rows), make([]float32, w2.rows)
		whole.matvec(want, w1)
		split.matvec(got, w2)
		if split.partsErr() != nil {
			t.Fatal(split.partsErr())
		}
		for r := range want {
			if math.Float32bits(got[r]) != math.Float32bits(want[r]) {
				t.Fatalf("step %d (matrix %d): row %d = %g, want %g", i, st.id, r, got[r], want[r])
			}
		}
	}
}
