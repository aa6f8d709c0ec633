//go:build !nomodel

package main

import "github.com/picolm/picolm-wasm/wasm/internal/defaultmodel"

// embeddedModel is the GGUF built into the binary (stories260K), the model
// used when neither MODEL_URL nor MODEL_R2_BUCKET is set. Building with
// -tags nomodel (build.sh --free) leaves it out: see model_none.go.
func embeddedModel() []byte { return defaultmodel.Bytes() }
