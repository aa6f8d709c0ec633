package gguf_test

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/scripts/shareddata"
)

// TestParseHeaderPrefix parses a file's header from the prefix ParseHeader
// read, cut at the data section, to the same tensor table; a prefix that
// ends before the data section is refused, not read past.
func TestParseHeaderPrefix(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(b))
	h, err := gguf.ParseHeader(bytes.NewReader(b), size)
	if err != nil {
		t.Fatal(err)
	}
	pre := h.Bytes()[:h.DataOffset]
	f, err := gguf.ParseHeaderPrefix(pre, size)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != len(h.Tensors) || f.DataOffset != h.DataOffset {
		t.Fatalf("%d tensors at %d, want %d at %d", len(f.Tensors), f.DataOffset, len(h.Tensors), h.DataOffset)
	}
	for i := range f.Tensors {
		if f.Tensors[i].Name != h.Tensors[i].Name || f.Pos(&f.Tensors[i]) != h.Pos(&h.Tensors[i]) || f.Tensors[i].Data != nil {
			t.Fatalf("tensor %d: %s at %d, want %s at %d", i, f.Tensors[i].Name, f.Pos(&f.Tensors[i]), h.Tensors[i].Name, h.Pos(&h.Tensors[i]))
		}
	}
	for _, n := range []int{0, 10, len(pre) / 2, len(pre) - 1} {
		if _, err := gguf.ParseHeaderPrefix(pre[:n], size); err == nil {
			t.Errorf("a prefix of %d of %d header bytes parsed", n, len(pre))
		}
	}
	if _, err := gguf.ParseHeaderPrefix(b, size-1); err == nil {
		t.Error("a prefix longer than the file parsed")
	}
	s, err := gguf.ParseHeaderPrefixSet([][]byte{pre}, []int64{size}, []string{"stories260K.gguf"})
	if err != nil || len(s.Tensors) != len(h.Tensors) {
		t.Fatalf("ParseHeaderPrefixSet: %v", err)
	}
	if _, err := gguf.ParseHeaderPrefixSet([][]byte{pre, pre}, []int64{size}, nil); !errors.Is(err, gguf.ErrSplit) {
		t.Errorf("two prefixes for one file: %v", err)
	}
}
