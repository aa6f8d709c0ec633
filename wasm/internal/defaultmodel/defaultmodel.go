// Package defaultmodel embeds the model every front end runs when none is
// given: stories260K, Andrej Karpathy's 260K-parameter TinyStories Llama
// (karpathy/tinyllamas, MIT licence), as converted to GGUF v3 by llama.cpp and
// published by ggml-org. See LICENSE.stories260K in this directory.
package defaultmodel

import (
	"bytes"
	_ "embed"

	"github.com/picolm/picolm-wasm/gguf"
)

// Name is the embedded model's file name.
const Name = "stories260K.gguf"

//go:embed stories260K.gguf
var model []byte

// Bytes returns the embedded GGUF file. The slice is shared: do not modify it.
func Bytes() []byte { return model }

// WithChatTemplate returns a copy of the embedded GGUF file with
// tokenizer.chat_template set to src (stories260K has none): the built-in
// model as a chat model, for tests and the browser tests' model file.
func WithChatTemplate(src string) ([]byte, error) {
	f, err := gguf.Parse(model)
	if err != nil {
		return nil, err
	}
	kv := make([]gguf.KeyValue, 0, len(f.KV)+1)
	for _, e := range f.KV {
		if e.Key != "tokenizer.chat_template" {
			kv = append(kv, e)
		}
	}
	kv = append(kv, gguf.KeyValue{Key: "tokenizer.chat_template", Value: gguf.String(src)})
	var b bytes.Buffer
	if err := gguf.Write(&b, kv, f.Tensors, f.Alignment); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
