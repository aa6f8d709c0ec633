package gguf

import (
	"errors"
	"fmt"
	"io"
)

// headerChunk is the first prefix ParseHeader reads; it grows fourfold
// until the header fits (a 32k-token vocabulary takes about 1 MB, a 128k one
// about 4 MB).
const headerChunk = 1 << 20

// ParseHeader parses the header, metadata and tensor table of a GGUF file of
// size bytes read through r, without reading the tensor data: the tensors'
// Data are nil and their bytes are at DataOffset+Offset in r. Bytes returns
// the prefix that was read (at least up to DataOffset, or the whole file when
// shorter). It checks everything Parse does, so a file ParseHeader accepts is
// one Parse accepts.
func ParseHeader(r io.ReaderAt, size int64) (*File, error) {
	return parseHeader(r, size, headerChunk)
}

func parseHeader(r io.ReaderAt, size, chunk int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative size %d", size)
	}
	n := min(size, chunk)
	for {
		b := make([]byte, n)
		if _, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && n == size) {
			return nil, fmt.Errorf("gguf: reading the header: %w", err)
		}
		f, err := parse(b, uint64(size))
		// A prefix can end inside the header: a field is cut off, or a
		// count looks larger than the bytes left. Read more and retry; at
		// the whole file the error stands.
		if err != nil && n < size && (errors.Is(err, ErrTruncated) || errors.Is(err, ErrLength)) {
			n = min(size, 4*n)
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.DataOffset > uint64(n) && n < size {
			// The padding before the data section is part of what
			// identifies a file (see engine's model identity): read it too.
			n = int64(min(f.DataOffset, uint64(size)))
			continue
		}
		for i := range f.Tensors {
			f.Tensors[i].Data = nil // a small file may have been read whole
		}
		return f, nil
	}
}

// ParseHeaderPrefix parses the header, metadata and tensor table of a GGUF
// file of size bytes from its first bytes b alone, which must reach the
// data section (a File's Bytes from ParseHeader, cut at DataOffset, does):
// nothing else is read. The tensors' Data are nil, as with ParseHeader.
func ParseHeaderPrefix(b []byte, size int64) (*File, error) {
	if size < 0 || int64(len(b)) > size {
		return nil, fmt.Errorf("gguf: a prefix of %d bytes of a %d-byte file", len(b), size)
	}
	f, err := parse(b, uint64(size))
	if err != nil {
		return nil, err
	}
	if f.DataOffset > uint64(len(b)) && int64(len(b)) < size {
		return nil, fmt.Errorf("gguf: %w: the prefix of %d bytes ends before the data section at %d", ErrTruncated, len(b), f.DataOffset)
	}
	for i := range f.Tensors {
		f.Tensors[i].Data = nil
	}
	return f, nil
}
