//go:build !(linux || darwin)

package gguf

import (
	"fmt"
	"os"
)

// Open reads the file at path into memory and parses it (this platform has
// no mmap). The tensors' Data are views into that copy.
func Open(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
