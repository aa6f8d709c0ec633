package gguf

import (
	"bytes"
	"errors"
	"testing"

	"github.com/picolm/picolm-wasm/quant"
)

// TestExtensionTypeNeedsKey: a tensor of picoLM's own E8_IQ3 type parses only
// in a file that carries the key naming the extension.
func TestExtensionTypeNeedsKey(t *testing.T) {
	tr := quant.TraitsOf(quant.E8_IQ3)
	tensor := TensorInfo{Name: "w", Dims: []uint64{uint64(tr.BlockSize)}, Type: quant.E8_IQ3, Data: make([]byte, tr.TypeSize)}
	write := func(kv []KeyValue) []byte {
		var buf bytes.Buffer
		if err := Write(&buf, kv, []TensorInfo{tensor}, 32); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	_, err := Parse(write(nil))
	if !errors.Is(err, ErrTensorType) {
		t.Fatalf("without %s: %v", quant.E8IQ3Key, err)
	}
	t.Log(err)
	f, err := Parse(write([]KeyValue{{Key: quant.E8IQ3Key, Value: Uint32(quant.E8IQ3Version)}}))
	if err != nil {
		t.Fatalf("with %s: %v", quant.E8IQ3Key, err)
	}
	if f.Tensors[0].Type != quant.E8_IQ3 {
		t.Errorf("type %v", f.Tensors[0].Type)
	}
}
