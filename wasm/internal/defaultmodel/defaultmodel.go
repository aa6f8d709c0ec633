// Package defaultmodel embeds the model every front end runs when none is
// given: stories260K, Andrej Karpathy's 260K-parameter TinyStories Llama
// (karpathy/tinyllamas, MIT licence), as converted to GGUF v3 by llama.cpp and
// published by ggml-org. See LICENSE.stories260K in this directory.
package defaultmodel

import _ "embed"

// Name is the embedded model's file name.
const Name = "stories260K.gguf"

//go:embed stories260K.gguf
var gguf []byte

// Bytes returns the embedded GGUF file. The slice is shared: do not modify it.
func Bytes() []byte { return gguf }
