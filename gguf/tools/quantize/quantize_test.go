package quantize

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func open(t testing.TB, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func quantizeBytes(t testing.TB, f *gguf.File, ftName string, o Options) []byte {
	t.Helper()
	ft, err := ParseFileType(ftName)
	if err != nil {
		t.Fatal(err)
	}
	h, err := HyperOf(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(FileTensors(f), h, ft, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := Write(&buf, Metadata(f.KV, ft), p, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMatchesLlamaQuantize quantises the F32 synthetic model and compares
// with llama-quantize's output of the same file: same tensor order, names,
// shapes and types, byte-identical tensor data, same metadata; in fact the
// whole file is identical.
func TestMatchesLlamaQuantize(t *testing.T) {
	src := open(t, shareddata.Path(t, "synth/synth-small-F32.gguf"))
	for _, name := range []string{"Q4_K_M", "Q4_0", "Q8_0", "Q6_K", "IQ4_XS"} {
		t.Run(name, func(t *testing.T) {
			got := quantizeBytes(t, src, name, Options{Threads: 2})
			want, err := os.ReadFile(shareddata.Path(t, "synth/synth-small-"+name+".gguf"))
			if err != nil {
				t.Fatal(err)
			}
			g, err := gguf.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			w, err := gguf.Parse(want)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Tensors) != len(w.Tensors) {
				t.Fatalf("%d tensors, want %d", len(g.Tensors), len(w.Tensors))
			}
			for i := range w.Tensors {
				gt, wt := &g.Tensors[i], &w.Tensors[i]
				if gt.Name != wt.Name || gt.Type != wt.Type || !slices.Equal(gt.Dims, wt.Dims) {
					t.Errorf("tensor %d: %s %v %v, want %s %v %v", i, gt.Name, gt.Type, gt.Dims, wt.Name, wt.Type, wt.Dims)
					continue
				}
				if !bytes.Equal(gt.Data, wt.Data) {
					t.Errorf("%s (%v): data differs from llama-quantize's", gt.Name, gt.Type)
				}
			}
			if len(g.KV) != len(w.KV) {
				t.Fatalf("%d metadata keys, want %d", len(g.KV), len(w.KV))
			}
			for i := range w.KV {
				if g.KV[i].Key != w.KV[i].Key {
					t.Errorf("key %d: %q, want %q", i, g.KV[i].Key, w.KV[i].Key)
				}
			}
			if !t.Failed() && !bytes.Equal(got, want) {
				t.Errorf("tensors and keys agree but the files differ")
			}
		})
	}
}

// TestMixRules checks the per-tensor choices of the mixes on the shape of a
// 22-layer model (TinyLlama 1.1B: 32 heads, 4 KV heads).
func TestMixRules(t *testing.T) {
	var ts []Tensor
	add := func(name string, dims ...uint64) {
		ts = append(ts, Tensor{Name: name, Dims: dims, Type: quant.F32, Rows: func([]float32, int) error { return nil }})
	}
	const layers = 22
	add("token_embd.weight", 2048, 32000)
	add("output.weight", 2048, 32000)
	add("output_norm.weight", 2048)
	for i := range layers {
		p := "blk." + itoa(i) + "."
		add(p+"attn_norm.weight", 2048)
		add(p+"attn_q.weight", 2048, 2048)
		add(p+"attn_k.weight", 2048, 256)
		add(p+"attn_v.weight", 2048, 256)
		add(p+"attn_output.weight", 2048, 2048)
		add(p+"ffn_norm.weight", 2048)
		add(p+"ffn_gate.weight", 2048, 5632)
		add(p+"ffn_up.weight", 2048, 5632)
		add(p+"ffn_down.weight", 5632, 2048)
	}
	h := Hyper{Arch: "llama", Layers: layers, Heads: 32, KVHeads: 4}
	// moreBits(i) for n = 22: i < 2, i >= 19, (i-2)%3 == 2.
	more := map[int]bool{0: true, 1: true, 4: true, 7: true, 10: true, 13: true, 16: true, 19: true, 20: true, 21: true}
	type want func(name string, layer int) quant.Type
	cases := map[string]want{
		"Q4_K_M": func(name string, l int) quant.Type {
			switch {
			case name == "output.weight":
				return quant.Q6_K
			case (strings.Contains(name, "attn_v") || strings.Contains(name, "ffn_down")) && more[l]:
				return quant.Q6_K
			}
			return quant.Q4_K
		},
		"Q5_K_M": func(name string, l int) quant.Type {
			switch {
			case name == "output.weight":
				return quant.Q6_K
			case (strings.Contains(name, "attn_v") || strings.Contains(name, "ffn_down")) && more[l]:
				return quant.Q6_K
			}
			return quant.Q5_K
		},
		"Q3_K_M": func(name string, l int) quant.Type {
			switch {
			case name == "output.weight":
				return quant.Q6_K
			case strings.Contains(name, "attn_v"):
				if l < 2 {
					return quant.Q5_K
				}
				return quant.Q4_K
			case strings.Contains(name, "ffn_down"):
				if l < 22/16 {
					return quant.Q5_K
				}
				return quant.Q4_K
			case strings.Contains(name, "attn_output"):
				return quant.Q4_K
			}
			return quant.Q3_K
		},
		"Q2_K": func(name string, l int) quant.Type {
			switch {
			case name == "output.weight":
				return quant.Q6_K
			case strings.Contains(name, "attn_v"):
				return quant.Q4_K // gqa 8
			case strings.Contains(name, "ffn_down"), strings.Contains(name, "attn_output"):
				return quant.Q3_K
			}
			return quant.Q2_K
		},
		"IQ4_XS": func(name string, l int) quant.Type {
			switch {
			case name == "output.weight":
				return quant.Q6_K
			case strings.Contains(name, "attn_v"):
				return quant.Q5_K // gqa 8
			case strings.Contains(name, "ffn_down") && l < 22/8:
				return quant.Q5_K
			}
			return quant.IQ4_XS
		},
		"TQ1_0": func(name string, l int) quant.Type {
			switch name {
			case "output.weight":
				return quant.Q6_K
			case "token_embd.weight":
				return quant.Q4_K
			}
			return quant.TQ1_0
		},
		"Q8_0": func(string, int) quant.Type { return quant.Q8_0 },
		"F16":  func(string, int) quant.Type { return quant.F16 },
	}
	for name, want := range cases {
		ft, err := ParseFileType(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := MakePlan(ts, h, ft, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, tn := range p.Tensors {
			w := quant.F32
			if !strings.HasSuffix(tn.Name, "_norm.weight") {
				l := -1
				if rest, ok := strings.CutPrefix(tn.Name, "blk."); ok {
					l = atoi(rest[:strings.IndexByte(rest, '.')])
				}
				w = want(tn.Name, l)
			}
			if p.Types[i] != w {
				t.Errorf("%s: %s is %v, want %v", name, tn.Name, p.Types[i], w)
			}
		}
	}
	// Pure: one type everywhere but the norms.
	ft, _ := ParseFileType("Q4_K_M")
	p, err := MakePlan(ts, h, ft, Options{Pure: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, tn := range p.Tensors {
		if w := map[bool]quant.Type{true: quant.F32, false: quant.Q4_K}[strings.HasSuffix(tn.Name, "_norm.weight")]; p.Types[i] != w {
			t.Errorf("pure: %s is %v, want %v", tn.Name, p.Types[i], w)
		}
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

// TestFallback: rows that are not a whole number of blocks fall back as
// llama.cpp does, and the plan says so.
func TestFallback(t *testing.T) {
	rows := func([]float32, int) error { return nil }
	ts := []Tensor{
		{Name: "blk.0.attn_q.weight", Dims: []uint64{96, 8}, Type: quant.F32, Rows: rows},   // 96 % 256 != 0, 96 % 32 == 0
		{Name: "blk.0.ffn_down.weight", Dims: []uint64{40, 8}, Type: quant.F32, Rows: rows}, // not even 32
		{Name: "output.weight", Dims: []uint64{96, 8}, Type: quant.F32, Rows: rows},
	}
	h := Hyper{Arch: "llama", Layers: 1, Heads: 1, KVHeads: 1}
	for _, c := range []struct {
		ft                string
		attnQ, down, outp quant.Type
	}{
		{"Q4_K_M", quant.Q5_0, quant.F16, quant.Q8_0},
		{"Q5_K_M", quant.Q5_1, quant.F16, quant.Q8_0},
		{"Q6_K", quant.Q8_0, quant.F16, quant.Q8_0},
		{"Q2_K", quant.Q4_0, quant.F16, quant.Q8_0},
		{"IQ4_XS", quant.IQ4_NL, quant.F16, quant.Q8_0},
		{"TQ2_0", quant.Q4_0, quant.F16, quant.Q8_0},
		{"Q4_0", quant.Q4_0, quant.F16, quant.Q8_0}, // output: Q6_K, then its fallback
	} {
		ft, _ := ParseFileType(c.ft)
		p, err := MakePlan(ts, h, ft, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]quant.Type{}
		for i, tn := range p.Tensors {
			got[tn.Name] = p.Types[i]
		}
		if got["blk.0.attn_q.weight"] != c.attnQ || got["blk.0.ffn_down.weight"] != c.down {
			t.Errorf("%s: attn_q %v down %v, want %v %v", c.ft, got["blk.0.attn_q.weight"], got["blk.0.ffn_down.weight"], c.attnQ, c.down)
		}
		if got["output.weight"] != c.outp {
			t.Errorf("%s: output %v, want %v", c.ft, got["output.weight"], c.outp)
		}
		if len(p.Notes) == 0 {
			t.Errorf("%s: no fallback notes", c.ft)
		}
	}
}

func TestParseFileType(t *testing.T) {
	for in, want := range map[string]string{"q4_k_m": "Q4_K_M", "Q4_K": "Q4_K_M", "q3_k": "Q3_K_M", "Q5_K": "Q5_K_M", "bf16": "BF16", "TQ1_0": "TQ1_0"} {
		ft, err := ParseFileType(in)
		if err != nil || ft.Name != want {
			t.Errorf("ParseFileType(%q) = %v, %v; want %s", in, ft.Name, err, want)
		}
	}
	for _, in := range []string{"", "Q4", "IQ2_XXS", "Q4_K_MM", "F64"} {
		if _, err := ParseFileType(in); !errors.Is(err, ErrUnknownType) {
			t.Errorf("ParseFileType(%q): %v, want ErrUnknownType", in, err)
		}
	}
}

// TestQuantizeFileErrors: bad input, requantizing, unknown tensors: a clear
// error and no output file, not even a temporary one.
func TestQuantizeFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644)
	ft, _ := ParseFileType("Q4_0")
	out := filepath.Join(dir, "out.gguf")
	for _, c := range []struct {
		in   string
		o    Options
		want error
	}{
		{bad, Options{}, gguf.ErrTruncated},
		{filepath.Join(dir, "missing.gguf"), Options{}, os.ErrNotExist},
		{shareddata.Path(t, "ggml-vocab-llama-spm.gguf"), Options{}, ErrNotModel},
		{shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), Options{}, ErrRequantize},
	} {
		if _, err := QuantizeFile(c.in, out, ft, c.o); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.in, err, c.want)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Errorf("%s: files left: %v", c.in, ents)
		}
	}
	// Writing to a directory that does not exist.
	if _, err := QuantizeFile(shareddata.Path(t, "synth/synth-small-F32.gguf"), filepath.Join(dir, "no", "out.gguf"), ft, Options{}); err == nil {
		t.Error("no error for an output in a missing directory")
	}
	// Same file.
	if _, err := QuantizeFile(bad, bad, ft, Options{}); err == nil {
		t.Error("no error quantizing a file onto itself")
	}
}

// TestNonFinite: a NaN weight is an error, not a silently broken file.
func TestNonFinite(t *testing.T) {
	nan := float32(0)
	nan /= nan
	ts := []Tensor{{Name: "blk.0.attn_q.weight", Dims: []uint64{32, 4}, Type: quant.F32, Rows: func(dst []float32, first int) error {
		for i := range dst {
			dst[i] = float32(first + i)
		}
		if first == 0 {
			dst[37] = nan
		}
		return nil
	}}}
	ft, _ := ParseFileType("Q8_0")
	p, err := MakePlan(ts, Hyper{Arch: "llama", Layers: 1}, ft, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Write(io.Discard, nil, p, Options{})
	if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "row 1 column 5") {
		t.Errorf("got %v, want ErrNonFinite at row 1 column 5", err)
	}
}

// TestRequantize converts a Q8_0 model to Q4_0 when allowed, and a copy to
// the same type is the identity on tensor data.
func TestRequantize(t *testing.T) {
	dir := t.TempDir()
	ft, _ := ParseFileType("Q4_0")
	out := filepath.Join(dir, "q4.gguf")
	if _, err := QuantizeFile(shareddata.Path(t, "synth/synth-small-Q8_0.gguf"), out, ft, Options{AllowRequantize: true}); err != nil {
		t.Fatal(err)
	}
	f := open(t, out)
	for _, tn := range f.Tensors {
		if strings.Contains(tn.Name, "norm") != (tn.Type == quant.F32) {
			t.Errorf("%s is %v", tn.Name, tn.Type)
		}
	}
	src := open(t, shareddata.Path(t, "synth/synth-small-Q8_0.gguf"))
	got, err := gguf.Parse(quantizeBytes(t, src, "Q8_0", Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for i := range src.Tensors {
		s := &src.Tensors[i]
		g, ok := got.Tensor(s.Name)
		if !ok || g.Type != s.Type || !bytes.Equal(g.Data, s.Data) {
			t.Errorf("%s changed in a Q8_0 -> Q8_0 copy", s.Name)
		}
	}
}

// TestTiedEmbeddings: without output.weight, token_embd.weight is also the
// output and gets the output's type, as in llama.cpp.
func TestTiedEmbeddings(t *testing.T) {
	rows := func([]float32, int) error { return nil }
	ts := []Tensor{
		{Name: "token_embd.weight", Dims: []uint64{256, 64}, Type: quant.F32, Rows: rows},
		{Name: "blk.0.attn_q.weight", Dims: []uint64{256, 256}, Type: quant.F32, Rows: rows},
	}
	h := Hyper{Arch: "llama", Layers: 1, Heads: 1, KVHeads: 1}
	for ftName, want := range map[string]quant.Type{"Q4_K_M": quant.Q6_K, "Q8_0": quant.Q8_0, "TQ1_0": quant.Q6_K, "F16": quant.F16} {
		ft, _ := ParseFileType(ftName)
		p, err := MakePlan(ts, h, ft, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Tensors[0].Name != "token_embd.weight" || p.Types[0] != want {
			t.Errorf("%s: %s is %v, want %v", ftName, p.Tensors[0].Name, p.Types[0], want)
		}
	}
}

// TestChunking: a tensor spanning many chunks and workers converts to the
// same bytes as one FromFloat call over all of it, for any thread count.
func TestChunking(t *testing.T) {
	const cols, nrows = 512, 3001 // 1.5 Mi weights: several rounds of chunks
	val := func(i int) float32 { return float32((i*7919)%2003-1001) / 1000 }
	all := make([]float32, cols*nrows)
	for i := range all {
		all[i] = val(i)
	}
	ts := []Tensor{{Name: "blk.0.ffn_up.weight", Dims: []uint64{cols, nrows}, Type: quant.F32, Rows: func(dst []float32, first int) error {
		for i := range dst {
			dst[i] = val(first*cols + i)
		}
		return nil
	}}}
	want := make([]byte, nrows*cols/256*int(quant.TraitsOf(quant.Q4_K).TypeSize))
	quant.TraitsOf(quant.Q4_K).FromFloat(want, all)
	ft, _ := ParseFileType("Q4_K_S")
	for _, threads := range []int{1, 2, 3} {
		p, err := MakePlan(ts, Hyper{Arch: "llama", Layers: 1}, ft, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := Write(&buf, nil, p, Options{Threads: threads}); err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if tn := f.Tensors[0]; tn.Type != quant.Q4_K || !bytes.Equal(tn.Data, want) {
			t.Errorf("%d threads: %v, data equal %v", threads, tn.Type, bytes.Equal(tn.Data, want))
		}
	}
}
