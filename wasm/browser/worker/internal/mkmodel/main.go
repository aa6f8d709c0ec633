// Command mkmodel writes GGUF files the browser tests need and the repo does
// not ship: the built-in stories260K with a chat template added, or a larger
// llama model with random F32 weights (stories260K's vocabulary) to measure
// loading memory, or the built-in model with a NaN weight (which the engine
// refuses at load), or with a pooling type (0: a model that makes no
// embeddings).
//
//	go run ./wasm/browser/worker/internal/mkmodel -chat zephyr -o chat.gguf
//	go run ./wasm/browser/worker/internal/mkmodel -dim 1024 -layers 8 -o big.gguf
//	go run ./wasm/browser/worker/internal/mkmodel -nan blk.1.attn_norm.weight:9 -o nan.gguf
//	go run ./wasm/browser/worker/internal/mkmodel -pooling 0 -o noembed.gguf
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/picolm/picolm-wasm/engine/chat"
	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"
)

func main() {
	out := flag.String("o", "", "output file")
	family := flag.String("chat", "", "add the chat template of this builtin family (zephyr, chatml, llama2, ...)")
	dim := flag.Int("dim", 0, "write a random-weight model of this width instead")
	layers := flag.Int("layers", 4, "layers of the random-weight model")
	nan := flag.String("nan", "", "TENSOR:INDEX: set that element of an F32 tensor of the built-in model to NaN")
	pooling := flag.Int("pooling", -1, "set <arch>.pooling_type to this value (0: none, a model that makes no embeddings)")
	flag.Parse()
	if *out == "" {
		fail(fmt.Errorf("-o is required"))
	}
	base, err := gguf.Parse(defaultmodel.Bytes())
	if err != nil {
		fail(err)
	}
	kv := append([]gguf.KeyValue(nil), base.KV...)
	tensors := base.Tensors
	if *family != "" {
		src, ok := chat.Builtin(*family)
		if !ok {
			fail(fmt.Errorf("unknown chat template family %q", *family))
		}
		kv = set(kv, "tokenizer.chat_template", gguf.String(src))
	}
	if *dim > 0 {
		kv, tensors = random(kv, *dim, *layers)
	}
	if *pooling >= 0 {
		kv = set(kv, "llama.pooling_type", gguf.Uint32(uint32(*pooling)))
	}
	if *nan != "" {
		if tensors, err = poison(tensors, *nan); err != nil {
			fail(err)
		}
	}
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := gguf.Write(w, kv, tensors, 0); err != nil {
		fail(err)
	}
	if err := w.Flush(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func set(kv []gguf.KeyValue, key string, v gguf.Value) []gguf.KeyValue {
	for i := range kv {
		if kv[i].Key == key {
			kv[i].Value = v
			return kv
		}
	}
	return append(kv, gguf.KeyValue{Key: key, Value: v})
}

// random returns the metadata and tensors of a llama model of width dim with
// weights drawn uniformly from ±0.05 (a fixed xorshift sequence).
func random(kv []gguf.KeyValue, dim, layers int) ([]gguf.KeyValue, []gguf.TensorInfo) {
	heads := max(dim/64, 1)
	hidden := (dim*8/3 + 255) / 256 * 256
	vocab := 0
	for _, e := range kv {
		if e.Key == "tokenizer.ggml.tokens" {
			vocab = e.Value.Len()
		}
	}
	var keep []gguf.KeyValue
	for _, e := range kv {
		if !strings.HasPrefix(e.Key, "llama.") {
			keep = append(keep, e)
		}
	}
	keep = set(keep, "general.name", gguf.String(fmt.Sprintf("random-llama-%dx%d", dim, layers)))
	keep = set(keep, "general.file_type", gguf.Uint32(0))
	for _, p := range []struct {
		k string
		v uint32
	}{
		{"context_length", 512}, {"embedding_length", uint32(dim)}, {"feed_forward_length", uint32(hidden)},
		{"block_count", uint32(layers)}, {"attention.head_count", uint32(heads)},
		{"attention.head_count_kv", uint32(heads)}, {"rope.dimension_count", uint32(dim / heads)},
	} {
		keep = append(keep, gguf.KeyValue{Key: "llama." + p.k, Value: gguf.Uint32(p.v)})
	}
	keep = append(keep, gguf.KeyValue{Key: "llama.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-5)})

	state := uint64(0x9E3779B97F4A7C15)
	tensor := func(name string, cols, rows int, norm bool) gguf.TensorInfo {
		data := make([]byte, 4*cols*rows)
		for i := 0; i < cols*rows; i++ {
			v := float32(1)
			if !norm {
				state ^= state << 13
				state ^= state >> 7
				state ^= state << 17
				v = (float32(state>>40)/float32(1<<24) - 0.5) * 0.1
			}
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		dims := []uint64{uint64(cols)}
		if rows > 1 {
			dims = append(dims, uint64(rows))
		}
		return gguf.TensorInfo{Name: name, Dims: dims, Type: quant.F32, Data: data}
	}
	ts := []gguf.TensorInfo{tensor("token_embd.weight", dim, vocab, false), tensor("output_norm.weight", dim, 1, true)}
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensor(p+"attn_norm.weight", dim, 1, true),
			tensor(p+"attn_q.weight", dim, dim, false),
			tensor(p+"attn_k.weight", dim, dim, false),
			tensor(p+"attn_v.weight", dim, dim, false),
			tensor(p+"attn_output.weight", dim, dim, false),
			tensor(p+"ffn_norm.weight", dim, 1, true),
			tensor(p+"ffn_gate.weight", dim, hidden, false),
			tensor(p+"ffn_down.weight", hidden, dim, false),
			tensor(p+"ffn_up.weight", dim, hidden, false),
		)
	}
	return keep, ts
}

// poison returns tensors with element INDEX of the F32 tensor TENSOR (spec
// "TENSOR:INDEX") set to NaN, in a copy of its data.
func poison(tensors []gguf.TensorInfo, spec string) ([]gguf.TensorInfo, error) {
	name, idx, _ := strings.Cut(spec, ":")
	var i int
	if _, err := fmt.Sscan(idx, &i); err != nil {
		return nil, fmt.Errorf("-nan %q: want TENSOR:INDEX", spec)
	}
	tensors = append([]gguf.TensorInfo(nil), tensors...)
	for k := range tensors {
		t := &tensors[k]
		if t.Name != name {
			continue
		}
		if t.Type != quant.F32 || i < 0 || 4*i+4 > len(t.Data) {
			return nil, fmt.Errorf("-nan %q: %s is %s with %d bytes", spec, name, t.Type, len(t.Data))
		}
		t.Data = append([]byte(nil), t.Data...)
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(float32(math.NaN())))
		return tensors, nil
	}
	return nil, fmt.Errorf("-nan %q: no tensor %s", spec, name)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mkmodel:", err)
	os.Exit(1)
}
