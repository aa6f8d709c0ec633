//go:build linux || darwin

package gguf

import (
	"fmt"
	"syscall"
)

// Open maps the file at path into memory read-only and parses it. The
// tensors' Data are views into the mapping; Close unmaps it. A path that is
// not a regular file is refused (ErrNotRegular) without blocking.
func Open(path string) (*File, error) {
	fd, st, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	size := st.Size()
	if size == 0 {
		_, err := Parse(nil) // reports the truncated header
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("gguf: %s: %d bytes is too large to map", path, size)
	}
	b, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f, err := Parse(b)
	if err != nil {
		syscall.Munmap(b)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.release = func() error { return syscall.Munmap(b) }
	return f, nil
}
