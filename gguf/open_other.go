//go:build !(linux || darwin)

package gguf

import (
	"fmt"
	"io"
	"runtime"
)

// readChunk is the most Open reads at once.
const readChunk = 16 << 20

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
	// In chunks: wasmtime's WASI reads each fd_pread into a host buffer as
	// large as the read before copying it into wasm memory, so one read of
	// the whole file doubled the peak memory (1489 MB for a 668 MB model).
	for off := int64(0); off < size; off += readChunk {
		chunk := b[off:min(off+readChunk, size)]
		if n, err := fd.ReadAt(chunk, off); n != len(chunk) { // a full chunk may come with io.EOF
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("gguf: reading %s: %w", path, err)
		}
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
