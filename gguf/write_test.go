package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// sampleKV has one value of every type, arrays of every element type and
// arrays of arrays.
func sampleKV(tb testing.TB) []KeyValue {
	tb.Helper()
	must := func(v Value, err error) Value {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
	return []KeyValue{
		{"general.architecture", String("llama")},
		{"u8", Uint8(255)}, {"i8", Int8(-128)}, {"u16", Uint16(65535)}, {"i16", Int16(-32768)},
		{"u32", Uint32(math.MaxUint32)}, {"i32", Int32(math.MinInt32)}, {"f32", Float32(1e-5)},
		{"bool", Bool(true)}, {"empty", String("")}, {"utf8", String("héllo ▁ wörld")},
		{"u64", Uint64(math.MaxUint64)}, {"i64", Int64(math.MinInt64)}, {"f64", Float64(math.Pi)},
		{"tokens", Strings([]string{"<unk>", "<s>", "", "▁the"})},
		{"scores", Float32s([]float32{0, -1, -2.5, float32(math.Inf(-1))})},
		{"types", Int32s([]int32{2, 3, 3, 1})},
		{"bools", must(Array(TypeBool, Bool(true), Bool(false)))},
		{"u64s", must(Array(TypeUint64, Uint64(1), Uint64(1<<63)))},
		{"empty array", must(Array(TypeFloat64))},
		{"nested", must(Array(TypeArray,
			must(Array(TypeString, String("a"), String("bc"))),
			must(Array(TypeInt8, Int8(-1))),
			must(Array(TypeArray, must(Array(TypeUint8, Uint8(7), Uint8(8))), must(Array(TypeString)))),
		))},
	}
}

func sampleTensors() []TensorInfo {
	data := func(n int, seed byte) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	return []TensorInfo{
		{Name: "token_embd.weight", Dims: []uint64{64, 3}, Type: quant.Q8_0, Data: data(2*3*34, 1)},
		{Name: "norm", Dims: []uint64{5}, Type: quant.F32, Data: data(20, 2)}, // 20 bytes: padded
		{Name: "scalar", Dims: []uint64{}, Type: quant.F16, Data: data(2, 3)},
		{Name: "k", Dims: []uint64{256, 1, 1, 2}, Type: quant.Q4_K, Data: data(2*144, 4)},
		{Name: "empty", Dims: []uint64{0, 8}, Type: quant.F32, Data: []byte{}},
	}
}

func validSmallFile(tb testing.TB) []byte {
	var buf bytes.Buffer
	if err := Write(&buf, sampleKV(tb), sampleTensors(), 0); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// sameValue compares two values by type, scalar contents and, for arrays,
// element by element through Elem.
func sameValue(a, b Value) bool {
	if a.Type() != b.Type() || a.Len() != b.Len() || a.ElemType() != b.ElemType() {
		return false
	}
	if a.Type() == TypeArray {
		for i := range a.Len() {
			if !sameValue(a.Elem(i), b.Elem(i)) {
				return false
			}
		}
		return true
	}
	return a.num == b.num && a.str == b.str
}

func TestWriteRoundTrip(t *testing.T) {
	for _, align := range []uint64{0, 32, 64, 1, 4096} {
		kv := sampleKV(t)
		tensors := sampleTensors()
		var buf bytes.Buffer
		if err := Write(&buf, kv, tensors, align); err != nil {
			t.Fatal(err)
		}
		f, err := Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("align %d: %v", align, err)
		}
		wantAlign := max(align, 1)
		if align == 0 {
			wantAlign = 32
		}
		if f.Alignment != wantAlign || f.DataOffset%wantAlign != 0 {
			t.Errorf("align %d: alignment %d, data offset %d", align, f.Alignment, f.DataOffset)
		}
		extra := 0
		if wantAlign != 32 {
			extra = 1 // general.alignment was added
		}
		if len(f.KV) != len(kv)+extra {
			t.Fatalf("%d kv, want %d", len(f.KV), len(kv)+extra)
		}
		for i, e := range kv {
			if f.KV[i].Key != e.Key || !sameValue(f.KV[i].Value, e.Value) {
				t.Errorf("kv %d: %q = %#v, want %q = %#v", i, f.KV[i].Key, f.KV[i].Value, e.Key, e.Value)
			}
		}
		for i, ti := range tensors {
			g := f.Tensors[i]
			if g.Name != ti.Name || g.Type != ti.Type || !reflect.DeepEqual(g.Dims, ti.Dims) || !bytes.Equal(g.Data, ti.Data) {
				t.Errorf("tensor %d: %s %v %v %d bytes, want %s %v %v %d bytes", i, g.Name, g.Type, g.Dims, len(g.Data), ti.Name, ti.Type, ti.Dims, len(ti.Data))
			}
			if g.Offset%wantAlign != 0 {
				t.Errorf("tensor %s at %d", g.Name, g.Offset)
			}
		}
		if len(buf.Bytes())%int(wantAlign) != 0 {
			t.Errorf("file size %d not padded to %d", buf.Len(), wantAlign)
		}
	}
	// The nested value reads back through the typed accessors too.
	f, err := Parse(validSmallFile(t))
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := f.Lookup("nested")
	inner := nested.Elem(2).Elem(0)
	if x, ok := inner.Elem(1).Uint(); inner.Len() != 2 || !ok || x != 8 {
		t.Errorf("nested[2][0] = %#v", inner)
	}
	if s, _ := nested.Elem(0).Strings(); !reflect.DeepEqual(s, []string{"a", "bc"}) {
		t.Errorf("nested[0] = %q", s)
	}
}

// TestWriteReproducesRealFiles: writing back a parsed real file gives the
// identical bytes, so Write lays files out as llama.cpp and gguf-py do.
func TestWriteReproducesRealFiles(t *testing.T) {
	for _, ff := range realFiles {
		b := readTestdata(t, ff.name)
		f, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, f.KV, f.Tensors, f.Alignment); err != nil {
			t.Fatal(err)
		}
		out := buf.Bytes()
		if f.Version == 2 {
			binary.LittleEndian.PutUint32(out[4:], 2) // Write always writes v3
		}
		if !bytes.Equal(out, b) {
			n := 0
			for n < min(len(out), len(b)) && out[n] == b[n] {
				n++
			}
			t.Errorf("%s: rewritten file differs at byte %d (sizes %d, %d)", ff.name, n, len(out), len(b))
		}
	}
}

func TestWriteErrors(t *testing.T) {
	kv := []KeyValue{{"a", Uint8(1)}}
	cases := []struct {
		name    string
		kv      []KeyValue
		tensors []TensorInfo
		align   uint64
		want    error
	}{
		{"duplicate key", append(kv, KeyValue{"a", Uint8(2)}), nil, 0, ErrDuplicateKey},
		{"duplicate tensor", nil, []TensorInfo{{Name: "t", Dims: []uint64{1}, Data: make([]byte, 4)}, {Name: "t", Dims: []uint64{1}, Data: make([]byte, 4)}}, 0, ErrDuplicateName},
		{"alignment 48", nil, nil, 48, ErrAlignment},
		{"alignment key mismatch", []KeyValue{{KeyAlignment, Uint32(64)}}, nil, 32, ErrAlignment},
		{"unknown type", nil, []TensorInfo{{Name: "t", Dims: []uint64{1}, Type: 5, Data: make([]byte, 4)}}, 0, ErrTensorType},
		{"partial block", nil, []TensorInfo{{Name: "t", Dims: []uint64{33}, Type: quant.Q8_0, Data: make([]byte, 34)}}, 0, ErrBlockSize},
		{"five dims", nil, []TensorInfo{{Name: "t", Dims: []uint64{1, 1, 1, 1, 1}, Data: make([]byte, 4)}}, 0, ErrDims},
	}
	for _, c := range cases {
		err := Write(&bytes.Buffer{}, c.kv, c.tensors, c.align)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := Write(&bytes.Buffer{}, nil, []TensorInfo{{Name: "t", Dims: []uint64{2}, Data: make([]byte, 4)}}, 0); err == nil {
		t.Error("data of the wrong size written")
	}
	if _, err := Array(TypeString, Uint8(1)); !errors.Is(err, ErrWrongType) {
		t.Errorf("mixed array: %v", err)
	}
}
