package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The KV cache file saves the keys and values of a prompt so a later run
// with the same model and a prompt sharing its prefix skips those tokens.
//
// Layout (little-endian):
//
//	magic    [8]byte  "PICOLMKV"
//	version  uint32   kvFileVersion
//	model    [32]byte Model.Identity()
//	layers   uint32
//	kvDim    uint32
//	n        uint32   number of cached positions
//	tokens   [n]uint32
//	keys     [layers][n][kvDim]uint16 (fp16)
//	values   [layers][n][kvDim]uint16 (fp16)
//	checksum [32]byte SHA-256 of everything before it
const (
	kvFileMagic   = "PICOLMKV"
	kvFileVersion = 1
	kvHeaderSize  = 8 + 4 + 32 + 4 + 4 + 4
)

// ErrCacheFile is wrapped by every reason a KV cache file is refused.
var ErrCacheFile = errors.New("KV cache file rejected")

// CacheFileSize returns the size in bytes of a KV cache file holding n
// positions of this session's model. No file this session accepts is larger
// than CacheFileSize(Context()): a reader can refuse a larger one before
// reading it.
func (s *Session) CacheFileSize(n int) int64 {
	c := &s.m.Config
	return cacheFileSize(int64(n), c.Layers, c.KVDim)
}

func cacheFileSize(n int64, layers, kvDim int) int64 {
	return int64(kvHeaderSize) + 4*n + 2*2*int64(layers)*n*int64(kvDim) + 32
}

// WriteCache writes the first n cached positions (normally the prompt) to w.
func (s *Session) WriteCache(w io.Writer, n int) error {
	if n < 0 || n > len(s.tokens) {
		return fmt.Errorf("WriteCache: %d positions requested, %d cached", n, len(s.tokens))
	}
	if s.products.parts != nil {
		return fmt.Errorf("WriteCache: %w: a split model's KV cache is held by its parts", ErrShard)
	}
	c := &s.m.Config
	h := sha256.New()
	bw := io.MultiWriter(w, h)
	hdr := make([]byte, 0, kvHeaderSize+4*n)
	hdr = append(hdr, kvFileMagic...)
	hdr = binary.LittleEndian.AppendUint32(hdr, kvFileVersion)
	hdr = append(hdr, s.m.identity[:]...)
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(c.Layers))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(c.KVDim))
	hdr = binary.LittleEndian.AppendUint32(hdr, uint32(n))
	for _, t := range s.tokens[:n] {
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(t))
	}
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	for _, cache := range [][]uint16{s.keyCache, s.valCache} {
		for l := 0; l < c.Layers; l++ {
			base := l * s.ctx * c.KVDim
			if err := binary.Write(bw, binary.LittleEndian, cache[base:base+n*c.KVDim]); err != nil {
				return err
			}
		}
	}
	_, err := w.Write(h.Sum(nil))
	return err
}

// ReadCache restores positions saved by WriteCache from the file's bytes,
// replacing the session's cache. It returns the number of positions restored.
// A file from another model, of another shape, truncated or corrupted is
// refused with an error wrapping ErrCacheFile and the session is left empty.
func (s *Session) ReadCache(b []byte) (int, error) {
	s.Rewind(0)
	c := &s.m.Config
	bad := func(format string, a ...any) (int, error) {
		return 0, fmt.Errorf("%w: "+format, append([]any{ErrCacheFile}, a...)...)
	}
	if s.products.parts != nil {
		return bad("a split model's KV cache is held by its parts")
	}
	if len(b) < kvHeaderSize+32 {
		return bad("%d bytes is shorter than a header", len(b))
	}
	if string(b[:8]) != kvFileMagic {
		return bad("not a picoLM KV cache file (bad magic)")
	}
	le := binary.LittleEndian
	if v := le.Uint32(b[8:]); v != kvFileVersion {
		return bad("version %d, this build reads version %d", v, kvFileVersion)
	}
	if !bytes.Equal(b[12:44], s.m.identity[:]) {
		return bad("it was made with a different model")
	}
	layers, kvDim, n := int(le.Uint32(b[44:])), int(le.Uint32(b[48:])), int64(le.Uint32(b[52:]))
	if layers != c.Layers || kvDim != c.KVDim {
		return bad("shape %d layers x %d, the model has %d x %d", layers, kvDim, c.Layers, c.KVDim)
	}
	if n > int64(s.ctx) {
		return bad("%d positions, the context holds %d", n, s.ctx)
	}
	want := cacheFileSize(n, layers, kvDim)
	if int64(len(b)) != want {
		return bad("%d bytes, expected %d (truncated or padded)", len(b), want)
	}
	body, sum := b[:len(b)-32], b[len(b)-32:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return bad("checksum mismatch (corrupted)")
	}
	p := kvHeaderSize
	tokens := make([]int, n)
	for i := range tokens {
		t := int(le.Uint32(b[p:]))
		if t >= c.VocabSize {
			return bad("token id %d outside the vocabulary", t)
		}
		tokens[i] = t
		p += 4
	}
	for _, cache := range [][]uint16{s.keyCache, s.valCache} {
		for l := 0; l < c.Layers; l++ {
			dst := cache[l*s.ctx*c.KVDim:][:int(n)*c.KVDim]
			for i := range dst {
				dst[i] = le.Uint16(b[p:])
				p += 2
			}
		}
	}
	s.tokens = append(s.tokens[:0], tokens...)
	return int(n), nil
}
