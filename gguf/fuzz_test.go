package gguf

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse. It must never panic; a failure
// must be a *FormatError with an offset inside the input; a success must
// give tensors inside the input, typed accessors that work on every value,
// and a file that Write reproduces and Parse reads back identically.
//
// Seeds: the headers (metadata and tensor table) of the real files, a small
// file with every value type, and every malformed case of TestMalformed.
// Crashers found by `go test -fuzz=FuzzParse` are kept in
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, ff := range realFiles {
		b := readTestdata(f, ff.name)
		g, err := Parse(b)
		if err != nil {
			f.Fatal(err)
		}
		// The header with a shortened vocabulary keeps seeds small; cutting
		// a real file elsewhere seeds the truncation paths.
		if g.DataOffset < 64<<10 {
			f.Add(b[:min(int(g.DataOffset)+256, len(b))])
		} else {
			f.Add(b[:4096])
		}
	}
	f.Add(validSmallFile(f))
	for _, c := range malformedCases() {
		f.Add(c.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Parse(data)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the %d-byte input: %v", fe.Offset, len(data), err)
			}
			return
		}
		checkFile(t, g, data)
	})
}

// checkFile checks the invariants of a successfully parsed file.
func checkFile(t *testing.T, g *File, data []byte) {
	for _, kv := range g.KV {
		v, ok := g.Lookup(kv.Key)
		if !ok || !sameValue(v, kv.Value) {
			t.Fatalf("Lookup(%q) disagrees with KV", kv.Key)
		}
		walk(t, kv.Value, 0)
	}
	for i := range g.Tensors {
		ti := &g.Tensors[i]
		start := g.DataOffset + ti.Offset
		if start+uint64(len(ti.Data)) > uint64(len(data)) || (len(ti.Data) > 0 && &ti.Data[0] != &data[start]) {
			t.Fatalf("tensor %q is not a view of bytes [%d, %d) of the input", ti.Name, start, start+uint64(len(ti.Data)))
		}
		if p, ok := g.Tensor(ti.Name); !ok || p != ti {
			t.Fatalf("Tensor(%q) disagrees", ti.Name)
		}
	}
	// Writing the file back and parsing it gives the same content.
	var buf bytes.Buffer
	if err := Write(&buf, g.KV, g.Tensors, g.Alignment); err != nil {
		t.Fatalf("Write of a parsed file: %v", err)
	}
	h, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("Parse of the rewritten file: %v", err)
	}
	if len(h.KV) != len(g.KV) || len(h.Tensors) != len(g.Tensors) || h.Alignment != g.Alignment {
		t.Fatalf("rewritten file: %d kv %d tensors align %d, want %d %d %d",
			len(h.KV), len(h.Tensors), h.Alignment, len(g.KV), len(g.Tensors), g.Alignment)
	}
	for i := range g.KV {
		if h.KV[i].Key != g.KV[i].Key || !sameValue(h.KV[i].Value, g.KV[i].Value) {
			t.Fatalf("rewritten kv %d differs", i)
		}
	}
	for i := range g.Tensors {
		a, b := &g.Tensors[i], &h.Tensors[i]
		if a.Name != b.Name || a.Type != b.Type || !reflect.DeepEqual(a.Dims, b.Dims) || !bytes.Equal(a.Data, b.Data) {
			t.Fatalf("rewritten tensor %d differs", i)
		}
	}
}

// walk reads every element of v through the accessors.
func walk(t *testing.T, v Value, depth int) {
	if depth > maxNesting {
		t.Fatalf("value nested %d deep", depth)
	}
	v.String()
	v.Int()
	v.Uint()
	v.Float()
	v.Bool()
	if v.Type() != TypeArray {
		return
	}
	switch v.ElemType() {
	case TypeString:
		s, ok := v.Strings()
		if !ok || len(s) != v.Len() {
			t.Fatalf("Strings: %d of %d, %v", len(s), v.Len(), ok)
		}
		for i, x := range s {
			if e, _ := v.Elem(i).String(); e != x {
				t.Fatalf("Elem(%d) = %q, Strings()[%d] = %q", i, e, i, x)
			}
		}
	case TypeFloat32:
		if s, ok := v.Float32s(); !ok || len(s) != v.Len() {
			t.Fatal("Float32s")
		}
	default:
		v.Int32s()
	}
	for i := range v.Len() {
		walk(t, v.Elem(i), depth+1)
	}
}
