package synth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/picolm/picolm-wasm/engine"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/gguf/internal/ggtest"
	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func vocab(t testing.TB, name string) *gguf.File {
	t.Helper()
	return ggtest.Open(t, shareddata.Path(t, name))
}

// tiny is the small shape with the 512-token stories260K vocabulary: every
// type in a fraction of a second.
func tiny(t testing.TB, seed uint64) Model {
	return Model{Shape: Small, Seed: seed, Vocab: vocab(t, "synth/synth-small-F32.gguf")}
}

func write(t testing.TB, m Model, ftName string, o quantize.Options) []byte {
	t.Helper()
	ft, err := ParseFileType(ftName)
	if err != nil {
		t.Fatal(err)
	}
	p, kv, err := m.Plan(ft, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := quantize.Write(&buf, kv, p, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeterministic: the same seed gives the same bytes, whatever the number
// of threads; another seed gives other weights.
func TestDeterministic(t *testing.T) {
	m := tiny(t, 42)
	a := write(t, m, "Q4_K_M", quantize.Options{Threads: 1})
	b := write(t, m, "Q4_K_M", quantize.Options{Threads: 3})
	if !bytes.Equal(a, b) {
		t.Fatal("two writes with the same seed differ")
	}
	m.Seed = 43
	c := write(t, m, "Q4_K_M", quantize.Options{Threads: 2})
	if len(c) != len(a) || bytes.Equal(a, c) {
		t.Fatalf("seed 43: %d bytes, equal to seed 42: %v", len(c), bytes.Equal(a, c))
	}
}

// TestShapeAndTypes: the file parses back with the shape's metadata, every
// tensor's shape, and Q4_K_M's types (llama-quantize's mix for 2 layers).
func TestShapeAndTypes(t *testing.T) {
	f, err := gguf.Parse(write(t, tiny(t, 1), "Q4_K_M", quantize.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]uint64{
		"llama.embedding_length": 256, "llama.block_count": 2, "llama.attention.head_count": 4,
		"llama.attention.head_count_kv": 2, "llama.feed_forward_length": 768, "llama.context_length": 256,
		"llama.rope.dimension_count": 64, "llama.vocab_size": 512, "general.file_type": 15,
	} {
		if v, err := f.Uint(k); err != nil || v != want {
			t.Errorf("%s = %d, %v; want %d", k, v, err, want)
		}
	}
	src := vocab(t, "synth/synth-small-F32.gguf")
	want, _ := src.Strings("tokenizer.ggml.tokens")
	if got, err := f.Strings("tokenizer.ggml.tokens"); err != nil || len(got) != 512 || got[300] != want[300] {
		t.Errorf("tokens not copied: %v", err)
	}
	types := map[string]quant.Type{
		"token_embd.weight": quant.Q4_K, "output.weight": quant.Q6_K, "output_norm.weight": quant.F32,
		"blk.0.attn_v.weight": quant.Q4_K, "blk.1.attn_v.weight": quant.Q6_K,
		"blk.0.ffn_down.weight": quant.Q4_K, "blk.1.ffn_down.weight": quant.Q6_K,
		"blk.1.attn_q.weight": quant.Q4_K, "blk.1.ffn_norm.weight": quant.F32,
	}
	dims := map[string][]uint64{
		"token_embd.weight": {256, 512}, "output.weight": {256, 512}, "output_norm.weight": {256},
		"blk.0.attn_q.weight": {256, 256}, "blk.0.attn_k.weight": {256, 128}, "blk.0.attn_v.weight": {256, 128},
		"blk.0.attn_output.weight": {256, 256}, "blk.0.ffn_gate.weight": {256, 768}, "blk.0.ffn_up.weight": {256, 768},
		"blk.0.ffn_down.weight": {768, 256}, "blk.0.attn_norm.weight": {256},
	}
	if len(f.Tensors) != 3+2*9 {
		t.Errorf("%d tensors, want 21", len(f.Tensors))
	}
	for name, typ := range types {
		if tn, ok := f.Tensor(name); !ok || tn.Type != typ {
			t.Errorf("%s: %v, want %v", name, tn, typ)
		}
	}
	for name, d := range dims {
		if tn, ok := f.Tensor(name); !ok || fmt.Sprint(tn.Dims) != fmt.Sprint(d) {
			t.Errorf("%s: dims %v, want %v", name, tn, d)
		}
	}
}

// TestDistribution: F32 weights have the stated spread, norms are 1.
func TestDistribution(t *testing.T) {
	f, err := gguf.Parse(write(t, tiny(t, 5), "F32", quantize.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for name, std := range map[string]float64{"blk.0.ffn_up.weight": WeightStd, "token_embd.weight": WeightStd, "output.weight": OutputStd, "blk.1.attn_norm.weight": 0} {
		tn, _ := f.Tensor(name)
		x := make([]float32, tn.Elements())
		quant.TraitsOf(quant.F32).Dequantize(x, tn.Data)
		var s, s2 float64
		for _, v := range x {
			s += float64(v)
			s2 += float64(v) * float64(v)
		}
		mean := s / float64(len(x))
		sd := math.Sqrt(s2/float64(len(x)) - mean*mean)
		if std == 0 {
			if mean != 1 || sd != 0 {
				t.Errorf("%s: mean %g sd %g, want all ones", name, mean, sd)
			}
			continue
		}
		if math.Abs(mean) > 4*std/math.Sqrt(float64(len(x))) || math.Abs(sd/std-1) > 0.02 {
			t.Errorf("%s: mean %g sd %g, want N(0, %g²)", name, mean, sd, std)
		}
	}
}

// logits loads the model in b, returns its logits for BOS and the 8 tokens
// it generates greedily after BOS.
func logits(t testing.TB, b []byte) ([]float32, []int) {
	t.Helper()
	f, err := gguf.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := engine.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mod.NewSession(engine.SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, err := s.Forward(1)
	if err != nil {
		t.Fatal(err)
	}
	l = append([]float32(nil), l...)
	var ids []int
	if _, err := s.Generate([]int{1}, engine.GenerateOptions{MaxTokens: 8}, func(id int, _ []byte) bool {
		if id >= 0 {
			ids = append(ids, id)
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return l, ids
}

// TestRuns: every file type loads in the engine, generates, and its logits
// for BOS follow the F32 model's (the quantised weights are those weights).
func TestRuns(t *testing.T) {
	m := tiny(t, 9)
	f32 := write(t, m, "F32", quantize.Options{})
	ref, _ := logits(t, f32)
	ff, err := gguf.Parse(f32)
	if err != nil {
		t.Fatal(err)
	}
	worst := map[quant.Type]float64{}
	// The smallest correlation with the F32 logits each type must reach.
	for name, minCorr := range map[string]float64{
		"F16": 0.9999, "BF16": 0.999, "Q8_0": 0.999, "Q6_K": 0.99, "Q5_K_M": 0.99, "Q5_0": 0.99, "Q5_1": 0.99,
		"Q4_K_M": 0.97, "Q4_0": 0.95, "Q4_1": 0.95, "Q3_K_M": 0.9, "Q2_K": 0.8, "IQ4_NL": 0.95, "IQ4_XS": 0.95,
		"TQ1_0": 0.1, "TQ2_0": 0.1, // ternary weights keep little of a Gaussian
	} {
		b := write(t, m, name, quantize.Options{})
		got, ids := logits(t, b)
		// Every tensor dequantises to the F32 model's weights within its type's error.
		qf, err := gguf.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, qt := range qf.Tensors {
			rt, _ := ff.Tensor(qt.Name)
			x := make([]float32, qt.Elements())
			y := make([]float32, len(x))
			quant.TraitsOf(quant.F32).Dequantize(x, rt.Data)
			quant.TraitsOf(qt.Type).Dequantize(y, qt.Data)
			var se, ss float64
			for i := range x {
				d := float64(x[i] - y[i])
				se, ss = se+d*d, ss+float64(x[i])*float64(x[i])
			}
			e := math.Sqrt(se / ss)
			worst[qt.Type] = max(worst[qt.Type], e)
			if e > relErr[qt.Type] {
				t.Errorf("%s: %s (%v): relative RMS error %.4f, want <= %g", name, qt.Name, qt.Type, e, relErr[qt.Type])
			}
		}
		if len(ids) != 8 {
			t.Errorf("%s: generated %d tokens", name, len(ids))
		}
		if c := corr(ref, got); c < minCorr {
			t.Errorf("%s: logits correlate %.4f with F32's, want >= %g", name, c, minCorr)
		} else {
			t.Logf("%-6s logits correlation with F32 %.5f", name, c)
		}
	}
	t.Logf("worst relative RMS error per type: %v", worst)
}

// relErr bounds the relative RMS error (||w - deq(q(w))|| / ||w||) of each
// type on Gaussian weights.
var relErr = map[quant.Type]float64{
	quant.F32: 0, quant.F16: 0.0003, quant.BF16: 0.0025, quant.Q8_0: 0.007, quant.Q6_K: 0.025,
	quant.Q5_0: 0.055, quant.Q5_1: 0.05, quant.Q5_K: 0.05, quant.Q4_0: 0.11, quant.Q4_1: 0.1, quant.Q4_K: 0.09,
	quant.IQ4_NL: 0.1, quant.IQ4_XS: 0.1, quant.Q3_K: 0.2, quant.Q2_K: 0.38, quant.TQ1_0: 0.85, quant.TQ2_0: 0.85,
}

func corr(a, b []float32) float64 {
	var sa, sb, saa, sbb, sab float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		sa, sb, saa, sbb, sab = sa+x, sb+y, saa+x*x, sbb+y*y, sab+x*y
	}
	n := float64(len(a))
	return (sab - sa*sb/n) / math.Sqrt((saa-sa*sa/n)*(sbb-sb*sb/n))
}

// TestStreams: writing a model allocates a small fraction of its size (the
// tensors are never all in memory), and WriteFile leaves the same bytes.
func TestStreams(t *testing.T) {
	m := Model{Shape: Small, Seed: 3, Vocab: vocab(t, "ggml-vocab-llama-spm.gguf")}
	o := quantize.Options{Threads: 2}
	measure := func(layers int) (size int64, alloc uint64) {
		m := m
		m.Layers = layers
		ft, _ := quantize.ParseFileType("F32")
		p, kv, err := m.Plan(ft, o)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n := &countWriter{}
		if _, err := quantize.Write(n, kv, p, o); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return n.n, after.TotalAlloc - before.TotalAlloc
	}
	s2, a2 := measure(2)
	s8, a8 := measure(8)
	t.Logf("2 layers: file %.1f MiB, allocated %.1f MiB; 8 layers: %.1f MiB, %.1f MiB", float64(s2)/(1<<20), float64(a2)/(1<<20), float64(s8)/(1<<20), float64(a8)/(1<<20))
	if a2 > uint64(s2)/8 || a8 > a2+1<<20 || s8 < s2+10<<20 {
		t.Errorf("allocations grow with the model: %d bytes for %d, %d for %d", a2, s2, a8, s8)
	}

	path := filepath.Join(t.TempDir(), "m.gguf")
	ft8, _ := quantize.ParseFileType("Q8_0")
	if _, err := m.WriteFile(path, ft8, o); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := write(t, m, "Q8_0", o); !bytes.Equal(got, want) {
		t.Error("WriteFile and Write differ")
	}
	f, err := gguf.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Load(f); err != nil {
		t.Fatal(err)
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

var _ io.Writer = (*countWriter)(nil)

func TestBadShape(t *testing.T) {
	v := vocab(t, "synth/synth-small-F32.gguf")
	for _, s := range []Shape{
		{Embd: 256, Layers: 2, Heads: 3, KVHeads: 1, FF: 768, Context: 256},
		{Embd: 256, Layers: 2, Heads: 4, KVHeads: 3, FF: 768, Context: 256},
		{Embd: 256, Layers: 0, Heads: 4, KVHeads: 2, FF: 768, Context: 256},
		{Embd: -256, Layers: 2, Heads: 4, KVHeads: 2, FF: 768, Context: 256},
	} {
		m := Model{Shape: s, Vocab: v}
		if _, _, err := m.Plan(quantize.FileType{}, quantize.Options{}); !errors.Is(err, ErrShape) {
			t.Errorf("%+v: %v, want ErrShape", s, err)
		}
	}
	// A vocabulary file without tokens.
	var b bytes.Buffer
	if err := gguf.Write(&b, []gguf.KeyValue{{Key: "general.architecture", Value: gguf.String("llama")}}, nil, 0); err != nil {
		t.Fatal(err)
	}
	nv, err := gguf.Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	m := Model{Shape: Small, Vocab: nv}
	if _, _, err := m.Metadata(); !errors.Is(err, gguf.ErrNotFound) {
		t.Errorf("no tokens: %v, want ErrNotFound", err)
	}
}

// TestCodes: a codebook type (no quantiser) writes every weight matrix as
// random codes of that type, deterministically, with each block's weights at
// the tensor's standard deviation, and the model runs.
func TestCodes(t *testing.T) {
	for _, ft := range codebookTypes {
		m := tiny(t, 11)
		a := write(t, m, ft.Name, quantize.Options{Threads: 1})
		if b := write(t, m, ft.Name, quantize.Options{Threads: 2}); !bytes.Equal(a, b) {
			t.Errorf("%s: two writes with the same seed differ", ft.Name)
		}
		f, err := gguf.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		if id, err := f.Uint("general.file_type"); err != nil || id != uint64(ft.ID) {
			t.Errorf("%s: general.file_type %d, %v; want %d", ft.Name, id, err, ft.ID)
		}
		for _, tn := range f.Tensors {
			if len(tn.Dims) < 2 {
				if tn.Type != quant.F32 {
					t.Errorf("%s: %s is %v, want F32", ft.Name, tn.Name, tn.Type)
				}
				continue
			}
			if tn.Type != ft.Default {
				t.Errorf("%s: %s is %v", ft.Name, tn.Name, tn.Type)
				continue
			}
			std := WeightStd
			if tn.Name == "output.weight" {
				std = OutputStd
			}
			x := make([]float32, tn.Elements())
			quant.TraitsOf(tn.Type).Dequantize(x, tn.Data)
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			if rms := math.Sqrt(ss / float64(len(x))); math.Abs(rms/std-1) > 2e-3 {
				t.Errorf("%s: %s: RMS %g, want %g", ft.Name, tn.Name, rms, std)
			}
		}
		if _, ids := logits(t, a); len(ids) != 8 {
			t.Errorf("%s: generated %d tokens", ft.Name, len(ids))
		}
	}
	if _, err := ParseFileType("iq2_xxs"); err != nil {
		t.Errorf("ParseFileType(iq2_xxs): %v", err)
	}
	if _, err := ParseFileType("IQ9_Z"); !errors.Is(err, quantize.ErrUnknownType) {
		t.Errorf("ParseFileType(IQ9_Z): %v, want ErrUnknownType", err)
	}
	// Rows that are not whole blocks are refused.
	m := tiny(t, 1)
	m.Embd, m.Heads, m.KVHeads, m.FF = 128, 2, 1, 256
	ft, _ := ParseFileType("IQ3_S")
	if _, _, err := m.Plan(ft, quantize.Options{}); !errors.Is(err, ErrShape) {
		t.Errorf("n_embd 128 in IQ3_S: %v, want ErrShape", err)
	}
}
