package gguf

import (
	"bytes"
	"reflect"
	"testing"
)

// sameHeader checks that ParseHeader over b (read in prefixes starting at
// chunk bytes) agrees with Parse: both fail, or both give the same metadata,
// tensor table and data offset, and the header's Bytes cover the data offset.
func sameHeader(t *testing.T, b []byte, chunk int64) {
	t.Helper()
	want, werr := Parse(b)
	got, gerr := parseHeader(bytes.NewReader(b), int64(len(b)), chunk)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("chunk %d: Parse error %v, ParseHeader error %v", chunk, werr, gerr)
	}
	if werr != nil {
		return
	}
	if got.Version != want.Version || got.Alignment != want.Alignment || got.DataOffset != want.DataOffset {
		t.Fatalf("chunk %d: header %d/%d/%d, want %d/%d/%d", chunk, got.Version, got.Alignment, got.DataOffset, want.Version, want.Alignment, want.DataOffset)
	}
	if !reflect.DeepEqual(got.KV, want.KV) {
		t.Fatalf("chunk %d: metadata differs", chunk)
	}
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("chunk %d: %d tensors, want %d", chunk, len(got.Tensors), len(want.Tensors))
	}
	for i, ti := range got.Tensors {
		w := want.Tensors[i]
		if ti.Name != w.Name || ti.Type != w.Type || ti.Offset != w.Offset || !reflect.DeepEqual(ti.Dims, w.Dims) || ti.Data != nil {
			t.Fatalf("chunk %d: tensor %d is %+v, want %+v without data", chunk, i, ti, w)
		}
	}
	end := min(int(want.DataOffset), len(b))
	if len(got.Bytes()) < end || !bytes.Equal(got.Bytes()[:end], b[:end]) {
		t.Fatalf("chunk %d: Bytes has %d bytes, want the first %d of the file", chunk, len(got.Bytes()), end)
	}
}

func TestParseHeader(t *testing.T) {
	for _, ff := range realFiles {
		t.Run(ff.name, func(t *testing.T) {
			b := readTestdata(t, ff.name)
			for _, chunk := range []int64{1, 100, 4096, headerChunk} {
				sameHeader(t, b, chunk)
			}
		})
	}
	for _, c := range malformedCases() {
		for _, chunk := range []int64{1, 16, headerChunk} {
			sameHeader(t, c.data, chunk)
		}
	}
}

// FuzzParseHeader: ParseHeader, reading any prefix size, accepts exactly
// what Parse accepts and reads the same header.
func FuzzParseHeader(f *testing.F) {
	f.Add(validSmallFile(f), int64(7))
	for _, c := range malformedCases() {
		f.Add(c.data, int64(16))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk int64) {
		sameHeader(t, data, max(1, chunk%(1<<12)))
	})
}
