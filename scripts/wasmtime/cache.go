package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// cacheEntries bounds the compiled modules kept in a cache directory: the
// least recently used beyond it are removed when a new one is written (a
// compiled CLI is some tens of MB).
const cacheEntries = 8

// loadModule compiles the wasm file at path for engine, or, with a cache
// directory, loads the module compiled before for the same bytes, wasmtime
// version and code-generation settings (key). A cache entry is the
// serialized module followed by its SHA-256: one that does not match (a
// torn or damaged file) is compiled again and replaced, never deserialized
// (wasmtime trusts what it deserializes).
func loadModule(engine *wasmtime.Engine, path, key, cacheDir string) (*wasmtime.Module, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if cacheDir == "" {
		return compile(engine, path, wasm)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", wasmtimeVersion, key)
	h.Write(wasm)
	entry := filepath.Join(cacheDir, hex.EncodeToString(h.Sum(nil))+".cwasm")
	if b, err := os.ReadFile(entry); err == nil && len(b) > sha256.Size {
		body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
		if s := sha256.Sum256(body); bytes.Equal(s[:], sum) {
			// wasmtime refuses an entry from another engine configuration
			// or CPU: compile it again then.
			if m, err := wasmtime.NewModuleDeserialize(engine, body); err == nil {
				now := time.Now()
				os.Chtimes(entry, now, now) // recently used
				return m, nil
			}
		}
	}
	m, err := compile(engine, path, wasm)
	if err != nil {
		return nil, err
	}
	if err := store(cacheDir, entry, m); err != nil {
		fmt.Fprintf(os.Stderr, "wasmtime-run: not caching the compiled module: %v\n", err)
	}
	return m, nil
}

func compile(engine *wasmtime.Engine, path string, wasm []byte) (*wasmtime.Module, error) {
	m, err := wasmtime.NewModule(engine, wasm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// store writes m's serialized form and checksum to entry (a new file
// renamed over it) and removes the least recently used entries beyond
// cacheEntries.
func store(dir, entry string, m *wasmtime.Module) error {
	body, err := m.Serialize()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".*.tmp")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	_, err = tmp.Write(append(body, sum[:]...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), entry)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.cwasm"))
	type aged struct {
		path string
		t    time.Time
	}
	var es []aged
	for _, p := range old {
		if fi, err := os.Stat(p); err == nil {
			es = append(es, aged{p, fi.ModTime()})
		}
	}
	slices.SortFunc(es, func(a, b aged) int { return b.t.Compare(a.t) })
	for i := cacheEntries; i < len(es); i++ {
		if es[i].path != entry {
			os.Remove(es[i].path)
		}
	}
	return nil
}
