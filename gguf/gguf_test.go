package gguf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"
	"unsafe"

	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

func readTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(shareddata.Path(tb, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// fileFacts are values checked against PROVENANCE.md's header inspection.
type fileFacts struct {
	name       string
	version    uint32
	nKV        int
	nTensors   int
	dataOffset uint64
	vocab      int
	dataEndEOF bool // tensor data ends exactly at EOF
}

var realFiles = []fileFacts{
	{"stories260K.gguf", 3, 19, 48, 14176, 512, true},
	{"tinyllamas-stories-260k-q8_0.gguf", 2, 20, 48, 14240, 512, true},
	{"llama-2-tiny-random.gguf", 3, 18, 12, 724416, 32000, true},
	{"ggml-vocab-llama-spm.gguf", 3, 22, 0, 723872, 32000, false},
	{"ggml-vocab-phi-3.gguf", 3, 26, 0, 726048, 32064, false},
	{"ggml-vocab-gpt-2.gguf", 3, 16, 0, 1766816, 50257, false},
	{"synth/synth-small-F32.gguf", 3, 22, 21, 12704, 512, true},
	{"synth/synth-small-Q4_0.gguf", 3, 23, 21, 12736, 512, true},
	{"synth/synth-small-Q4_K_M.gguf", 3, 23, 21, 12736, 512, true},
	{"synth/synth-small-Q6_K.gguf", 3, 23, 21, 12736, 512, true},
	{"synth/synth-small-Q8_0.gguf", 3, 23, 21, 12736, 512, true},
	{"synth/synth-small-IQ4_XS.gguf", 3, 23, 21, 12736, 512, true},
}

func TestRealFiles(t *testing.T) {
	for _, ff := range realFiles {
		t.Run(ff.name, func(t *testing.T) {
			b := readTestdata(t, ff.name)
			f, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if f.Version != ff.version || len(f.KV) != ff.nKV || len(f.Tensors) != ff.nTensors || f.DataOffset != ff.dataOffset {
				t.Errorf("v%d, %d kv, %d tensors, data at %d; want v%d, %d, %d, %d",
					f.Version, len(f.KV), len(f.Tensors), f.DataOffset, ff.version, ff.nKV, ff.nTensors, ff.dataOffset)
			}
			if f.Alignment != 32 {
				t.Errorf("alignment %d", f.Alignment)
			}
			if ff.nTensors == 0 && f.DataOffset <= uint64(len(b)) {
				t.Errorf("vocab-only file: data offset %d is not past EOF %d", f.DataOffset, len(b))
			}
			toks, err := f.Strings("tokenizer.ggml.tokens")
			if err != nil {
				t.Fatal(err)
			}
			if len(toks) != ff.vocab {
				t.Errorf("%d tokens, want %d", len(toks), ff.vocab)
			}
			types, err := f.Int32s("tokenizer.ggml.token_type")
			if err != nil || len(types) != ff.vocab {
				t.Errorf("token_type: %d entries, %v", len(types), err)
			}
			// Every tensor is a view into b, sized from its dims and type.
			end := uint64(0)
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				start := f.DataOffset + ti.Offset
				if len(ti.Data) > 0 && unsafe.SliceData(ti.Data) != &b[start] {
					t.Errorf("%s: Data is not a view into the file", ti.Name)
				}
				n := int(ti.Elements())
				rs, err := quant.RowSize(ti.Type, n)
				if err != nil || rs != len(ti.Data) {
					t.Errorf("%s: %d bytes, RowSize(%v, %d) = %d, %v", ti.Name, len(ti.Data), ti.Type, n, rs, err)
				}
				if p, ok := f.Tensor(ti.Name); !ok || p != ti {
					t.Errorf("Tensor(%q) = %v, %v", ti.Name, p, ok)
				}
				end = max(end, start+uint64(len(ti.Data)))
			}
			if ff.dataEndEOF && end != uint64(len(b)) {
				t.Errorf("tensor data ends at %d, file at %d", end, len(b))
			}
			// Open (mmap or read) gives the same result.
			g, err := Open(shareddata.Path(t, ff.name))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if !bytes.Equal(g.Bytes(), b) || len(g.KV) != len(f.KV) || len(g.Tensors) != len(f.Tensors) {
				t.Error("Open differs from Parse")
			}
			for i := range g.Tensors {
				if !bytes.Equal(g.Tensors[i].Data, f.Tensors[i].Data) {
					t.Errorf("Open: tensor %s differs", g.Tensors[i].Name)
				}
			}
		})
	}
}

// TestStories260K checks known values (PROVENANCE.md section 4).
func TestStories260K(t *testing.T) {
	f, err := Open(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for key, want := range map[string]uint64{
		"llama.embedding_length":          64,
		"llama.block_count":               5,
		"llama.attention.head_count":      8,
		"llama.attention.head_count_kv":   4,
		"llama.feed_forward_length":       172,
		"llama.context_length":            2048,
		"llama.rope.dimension_count":      8,
		"tokenizer.ggml.bos_token_id":     1,
		"tokenizer.ggml.eos_token_id":     2,
		"tokenizer.ggml.padding_token_id": math.MaxUint32,
	} {
		got, err := f.Uint(key)
		if err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", key, got, err, want)
		}
	}
	if s, err := f.String("general.architecture"); s != "llama" || err != nil {
		t.Errorf("architecture %q, %v", s, err)
	}
	if x, err := f.Float32("llama.attention.layer_norm_rms_epsilon"); x != 1e-5 || err != nil {
		t.Errorf("rms eps %g, %v", x, err)
	}
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	if toks[0] != "<unk>" || toks[1] != "<s>" || toks[2] != "</s>" || toks[3+'\n'] != "<0x0A>" {
		t.Errorf("tokens %q", toks[:4])
	}
	v, _ := f.Lookup("tokenizer.ggml.tokens")
	if v.Type() != TypeArray || v.ElemType() != TypeString || v.Len() != 512 {
		t.Errorf("tokens value: %v of %v, %d", v.Type(), v.ElemType(), v.Len())
	}
	for i := range v.Len() {
		if s, ok := v.Elem(i).String(); !ok || s != toks[i] {
			t.Fatalf("Elem(%d) = %q, Strings()[%d] = %q", i, s, i, toks[i])
		}
	}
	scores, err := f.Float32s("tokenizer.ggml.scores")
	if err != nil || len(scores) != 512 {
		t.Fatalf("scores: %d, %v", len(scores), err)
	}
	types, _ := f.Int32s("tokenizer.ggml.token_type")
	if types[0] != 2 || types[1] != 3 || types[3] != 6 {
		t.Errorf("token types %v", types[:4])
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || emb.Type != quant.F32 || len(emb.Dims) != 2 || emb.Dims[0] != 64 || emb.Dims[1] != 512 || len(emb.Data) != 64*512*4 {
		t.Fatalf("token_embd.weight: %+v", emb)
	}
	down, _ := f.Tensor("blk.4.ffn_down.weight")
	if down.Dims[0] != 172 || down.Dims[1] != 64 {
		t.Errorf("ffn_down dims %v", down.Dims)
	}
	if _, ok := f.Tensor("nope"); ok {
		t.Error("Tensor(nope) found")
	}
}

// TestStories260KMatchesQ8 cross-checks the two stories260K files: same
// norms bit for bit (F32 in both).
func TestStories260KMatchesQ8(t *testing.T) {
	a, err := Parse(readTestdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse(readTestdata(t, "tinyllamas-stories-260k-q8_0.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range b.Tensors {
		if ti.Type != quant.F32 {
			if ti.Type != quant.Q8_0 {
				t.Errorf("%s: type %v", ti.Name, ti.Type)
			}
			continue
		}
		ta, ok := a.Tensor(ti.Name)
		if !ok || !bytes.Equal(ta.Data, ti.Data) {
			t.Errorf("%s differs", ti.Name)
		}
		n++
	}
	if n != 11 {
		t.Errorf("%d F32 norm tensors, want 11", n)
	}
	if ft, err := b.Uint("general.file_type"); ft != 7 || err != nil {
		t.Errorf("file_type %d %v", ft, err)
	}
}

func TestV1Rejected(t *testing.T) {
	path := shareddata.Path(t, "tinyllamas-stories-260k-f32.gguf")
	_, err := Open(path)
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("Open(v1) = %v, want ErrVersion", err)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 4 {
		t.Fatalf("error %v: want a FormatError at offset 4", err)
	}
	t.Log(err)
}

func TestLookupErrors(t *testing.T) {
	f, err := Parse(readTestdata(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
	_, err = f.Uint("llama.nope")
	check("Uint missing", err, ErrNotFound)
	_, err = f.String("llama.block_count")
	check("String of uint32", err, ErrWrongType)
	_, err = f.Uint("general.name")
	check("Uint of string", err, ErrWrongType)
	_, err = f.Float32("llama.block_count")
	check("Float32 of uint32", err, ErrWrongType)
	_, err = f.Strings("tokenizer.ggml.scores")
	check("Strings of float32s", err, ErrWrongType)
	_, err = f.Float32s("tokenizer.ggml.tokens")
	check("Float32s of strings", err, ErrWrongType)
	_, err = f.Int32s("tokenizer.ggml.tokens")
	check("Int32s of strings", err, ErrWrongType)
	_, err = f.Bool("general.name")
	check("Bool of string", err, ErrWrongType)
	_, err = f.Bool("x")
	check("Bool missing", err, ErrNotFound)
	if _, err := f.Uint("llama.nope"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("llama.nope")) {
		t.Errorf("error %v does not name the key", err)
	}
}

// TestValueConversions covers Int/Uint/Float across the integer types.
func TestValueConversions(t *testing.T) {
	cases := []struct {
		v     Value
		i     int64
		iok   bool
		u     uint64
		uok   bool
		float float64
		fok   bool
	}{
		{Uint8(200), 200, true, 200, true, 0, false},
		{Int8(-3), -3, true, 0, false, 0, false},
		{Uint16(65535), 65535, true, 65535, true, 0, false},
		{Int16(-32768), -32768, true, 0, false, 0, false},
		{Uint32(math.MaxUint32), math.MaxUint32, true, math.MaxUint32, true, 0, false},
		{Int32(-1), -1, true, 0, false, 0, false},
		{Uint64(math.MaxUint64), 0, false, math.MaxUint64, true, 0, false},
		{Int64(math.MinInt64), math.MinInt64, true, 0, false, 0, false},
		{Float32(0.5), 0, false, 0, false, 0.5, true},
		{Float64(-2.25), 0, false, 0, false, -2.25, true},
		{String("7"), 0, false, 0, false, 0, false},
		{Bool(true), 0, false, 0, false, 0, false},
	}
	for _, c := range cases {
		i, iok := c.v.Int()
		u, uok := c.v.Uint()
		x, fok := c.v.Float()
		if i != c.i || iok != c.iok || u != c.u || uok != c.uok || x != c.float || fok != c.fok {
			t.Errorf("%v %#v: Int %d %v, Uint %d %v, Float %g %v", c.v.Type(), c.v, i, iok, u, uok, x, fok)
		}
	}
	if b, ok := Bool(true).Bool(); !b || !ok {
		t.Error("Bool(true)")
	}
	if _, ok := Uint8(1).Bool(); ok {
		t.Error("Uint8.Bool ok")
	}
	big, _ := Array(TypeInt64, Int64(1), Int64(math.MaxInt64))
	if _, ok := big.Int32s(); ok {
		t.Error("Int32s of an int64 beyond int32 succeeded")
	}
	small, _ := Array(TypeUint16, Uint16(1), Uint16(65535))
	if s, ok := small.Int32s(); !ok || s[1] != 65535 {
		t.Errorf("Int32s of uint16s: %v %v", s, ok)
	}
}

func BenchmarkStrings32k(b *testing.B) {
	f, err := Parse(readTestdata(b, "llama-2-tiny-random.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Strings("tokenizer.ggml.tokens"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse32kVocab(b *testing.B) {
	data := readTestdata(b, "llama-2-tiny-random.gguf")
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
