// Package ggtest holds the helpers the gguf tools' tests share.
package ggtest

import (
	"testing"

	"github.com/picolm/picolm-wasm/gguf"
)

// Open opens the GGUF file at path, closed when t ends, failing t if it
// cannot.
func Open(t testing.TB, path string) *gguf.File {
	t.Helper()
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
