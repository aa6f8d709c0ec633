package gguf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// Build a small GGUF file in memory and read it back.
func ExampleWrite() {
	norm := make([]byte, 4*4)
	for i := range 4 {
		binary.LittleEndian.PutUint32(norm[4*i:], math.Float32bits(float32(i)+0.5))
	}
	kv := []gguf.KeyValue{
		{Key: "general.architecture", Value: gguf.String("llama")},
		{Key: "llama.embedding_length", Value: gguf.Uint32(4)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.Strings([]string{"<unk>", "<s>", "</s>"})},
	}
	tensors := []gguf.TensorInfo{{Name: "output_norm.weight", Dims: []uint64{4}, Type: quant.F32, Data: norm}}
	var buf bytes.Buffer
	if err := gguf.Write(&buf, kv, tensors, 0); err != nil {
		panic(err)
	}

	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		panic(err)
	}
	n, _ := f.Uint("llama.embedding_length")
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	t, _ := f.Tensor("output_norm.weight")
	fmt.Println(f.Version, f.DataOffset, len(buf.Bytes()))
	fmt.Println(n, toks)
	fmt.Println(t.Name, t.Type, t.Dims, math.Float32frombits(binary.LittleEndian.Uint32(t.Data[12:])))
	_, err = f.Float32("llama.embedding_length")
	fmt.Println(err)
	// Output:
	// 3 256 288
	// 4 [<unk> <s> </s>]
	// output_norm.weight F32 [4] 3.5
	// gguf: metadata key "llama.embedding_length" is uint32, want float: wrong value type
}
