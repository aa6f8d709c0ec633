//go:build !(linux || darwin)

package gguf

import (
	"fmt"
	"io"
	"runtime"
)

// Open reads the file at path into memory and parses it (this platform has
// no mmap). The tensors' Data are views into that copy. A path that is not a
// regular file is refused (ErrNotRegular) without blocking, and the header is
// parsed before the rest is read, so a file that is not GGUF (or one too large
// for a wasm memory) is refused before its bytes are.
func Open(path string) (*File, error) {
	fd, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	size := st.Size()
	if _, err := ParseHeader(fd, size); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if runtime.GOARCH == "wasm" && size > MaxReadBytes {
		return nil, fmt.Errorf("gguf: %s: %d bytes is more than a wasm32 memory can hold (at most %d)", path, size, int64(MaxReadBytes))
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("gguf: %s: %d bytes is too large to read", path, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(fd, 0, size), b); err != nil {
		return nil, fmt.Errorf("gguf: reading %s: %w", path, err)
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
