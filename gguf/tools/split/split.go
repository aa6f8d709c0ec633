// Package split writes a GGUF model as a split model in the layout of
// llama.cpp's gguf-split (see package gguf's split.go), and merges a split
// model back into one file.
//
// Splitting keeps the tensors in order and starts a new shard when the next
// tensor would pass a limit, as llama-gguf-split does: MaxTensors tensors
// per shard (its --split-max-tensors, at i % MaxTensors == 0), or MaxBytes
// of tensor data, each tensor counted padded to 32 bytes and the metadata
// not at all (its --split-max-size; a shard always holds at least one
// tensor, so one larger than the limit is a shard of its own, where
// llama-gguf-split stops with an error if it is the first). The first shard
// holds the model's metadata then split.no (u16), split.count (u16),
// split.tensors.count (i32) and picolm.split.id; each later shard only the
// split keys, the id, and the picoLM extension keys its tensors' types need.
// Tensor data are padded to 32 bytes (the first shard: the model's
// general.alignment).
//
// The outputs appear only when all of them are complete: each is written to
// a temporary file beside it, and all are renamed at the end.
package split

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// Sentinel errors.
var (
	ErrOptions  = errors.New("split: bad options")
	ErrSameFile = errors.New("split: an output is an input file")
	ErrExists   = errors.New("split: the output exists")
	ErrNotSplit = errors.New("split: not a split model")
)

// DefaultMaxTensors is llama-gguf-split's default tensors per shard.
const DefaultMaxTensors = 128

// Options choose where shards end. Zero for both: DefaultMaxTensors.
type Options struct {
	MaxBytes   int64 // tensor data per shard (each tensor padded to 32 bytes); 0: no limit
	MaxTensors int   // tensors per shard; 0: no limit
	Progress   io.Writer
}

// ParseSize reads a size as llama-gguf-split's --split-max-size takes it:
// a positive integer and a unit, M (10^6 bytes) or G (10^9); K (10^3) is
// accepted too.
func ParseSize(s string) (int64, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("%w: size %q: want a number and a unit (K, M or G), e.g. 500M", ErrOptions, s)
	}
	var unit int64
	switch s[len(s)-1] {
	case 'K':
		unit = 1e3
	case 'M':
		unit = 1e6
	case 'G':
		unit = 1e9
	default:
		return 0, fmt.Errorf("%w: size %q: the unit must be K, M or G (10^3, 10^6, 10^9 bytes)", ErrOptions, s)
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return 0, fmt.Errorf("%w: size %q: want a positive whole number before the unit", ErrOptions, s)
	}
	return n * unit, nil
}

// padded is a tensor's size counted against MaxBytes.
func padded(n int) int64 { return (int64(n) + 31) &^ 31 }

// Plan returns, for each shard, the indexes into f.Tensors it holds.
func Plan(f *gguf.File, o Options) ([][]int, error) {
	if o.MaxBytes < 0 || o.MaxTensors < 0 {
		return nil, fmt.Errorf("%w: negative limit", ErrOptions)
	}
	if o.MaxBytes == 0 && o.MaxTensors == 0 {
		o.MaxTensors = DefaultMaxTensors
	}
	if len(f.Tensors) == 0 {
		return nil, fmt.Errorf("%w: the model has no tensors", ErrOptions)
	}
	var plan [][]int
	var cur []int
	size := int64(0)
	for i := range f.Tensors {
		n := padded(len(f.Tensors[i].Data))
		if len(cur) > 0 && ((o.MaxTensors > 0 && len(cur) == o.MaxTensors) || (o.MaxBytes > 0 && size+n > o.MaxBytes)) {
			plan = append(plan, cur)
			cur, size = nil, 0
		}
		cur = append(cur, i)
		size += n
	}
	plan = append(plan, cur)
	if len(plan) > gguf.MaxShards {
		return nil, fmt.Errorf("%w: %d shards; split.count holds at most %d", ErrOptions, len(plan), gguf.MaxShards)
	}
	return plan, nil
}

// isSplitKey reports whether a key describes a split (not the model).
func isSplitKey(k string) bool {
	return k == gguf.KeySplitNo || k == gguf.KeySplitCount || k == gguf.KeySplitTensors || k == gguf.KeySplitID
}

// ModelKV returns f's metadata without the split keys.
func ModelKV(f *gguf.File) []gguf.KeyValue {
	kv := make([]gguf.KeyValue, 0, len(f.KV))
	for _, e := range f.KV {
		if !isSplitKey(e.Key) {
			kv = append(kv, e)
		}
	}
	return kv
}

// SetID is the picolm.split.id of a split of f: the SHA-256 of its header
// bytes (every part's) and all its tensor data, in hex.
func SetID(f *gguf.File) string {
	h := sha256.New()
	for _, p := range f.Parts() {
		b := p.Bytes()
		h.Write(b[:min(int(p.DataOffset), len(b))])
	}
	for i := range f.Tensors {
		h.Write(f.Tensors[i].Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Shards returns the metadata and tensors of each shard of a split of f by
// plan (see the package comment).
func Shards(f *gguf.File, plan [][]int) ([][]gguf.KeyValue, [][]gguf.TensorInfo) {
	id := gguf.String(SetID(f))
	model := ModelKV(f)
	n := len(plan)
	kvs := make([][]gguf.KeyValue, n)
	ts := make([][]gguf.TensorInfo, n)
	for k, idx := range plan {
		var kv []gguf.KeyValue
		if k == 0 {
			kv = append(kv, model...)
		}
		kv = append(kv,
			gguf.KeyValue{Key: gguf.KeySplitNo, Value: gguf.Uint16(uint16(k))},
			gguf.KeyValue{Key: gguf.KeySplitCount, Value: gguf.Uint16(uint16(n))},
			gguf.KeyValue{Key: gguf.KeySplitTensors, Value: gguf.Int32(int32(len(f.Tensors)))},
			gguf.KeyValue{Key: gguf.KeySplitID, Value: id})
		seen := map[string]bool{}
		for _, i := range idx {
			t := f.Tensors[i]
			ts[k] = append(ts[k], gguf.TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type, Data: t.Data})
			// A picoLM type's key goes with its tensors (the parser
			// refuses the type without it).
			if key, own := quant.ExtensionKey(t.Type); own && k > 0 && !seen[key] {
				seen[key] = true
				if v, ok := f.Lookup(key); ok {
					kv = append(kv, gguf.KeyValue{Key: key, Value: v})
				}
			}
		}
		kvs[k] = kv
	}
	return kvs, ts
}

// Split writes the model at in (a file or a split model, gguf.OpenSet) as a
// split model PREFIX-00001-of-0000N.gguf, ... and returns their paths.
func Split(in, prefix string, o Options) ([]string, error) {
	f, err := gguf.OpenSet(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	plan, err := Plan(f, o)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(plan))
	for k := range plan {
		paths[k] = gguf.ShardName(prefix, k, len(plan))
	}
	if err := notInput(f, in, paths); err != nil {
		return nil, err
	}
	kvs, ts := Shards(f, plan)
	w := newWriter()
	defer w.abort()
	for k := range plan {
		bytes := 0
		for _, t := range ts[k] {
			bytes += len(t.Data)
		}
		progress(o, "%s: %d tensors, %.2f MB\n", paths[k], len(ts[k]), float64(bytes)/1e6)
		if err := w.write(paths[k], kvs[k], ts[k]); err != nil {
			return nil, err
		}
	}
	if err := w.commit(); err != nil {
		return nil, err
	}
	progress(o, "%d shards, %d tensors\n", len(plan), len(f.Tensors))
	return paths, nil
}

// Merge writes the split model whose shard is at in (any of them) as one
// file at out, without the split keys: a model split by Split merges back
// into the bytes it was split from when that file had its tensors in order,
// each padded to its alignment, as llama.cpp and gguf-py write them. out
// must not exist.
func Merge(in, out string, o Options) error {
	f, err := gguf.OpenSet(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.Shards == nil {
		return fmt.Errorf("%w: %s has no %s", ErrNotSplit, in, gguf.KeySplitCount)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, out)
	}
	ts := make([]gguf.TensorInfo, len(f.Tensors))
	for i, t := range f.Tensors {
		ts[i] = gguf.TensorInfo{Name: t.Name, Dims: t.Dims, Type: t.Type, Data: t.Data}
	}
	w := newWriter()
	defer w.abort()
	if err := w.write(out, ModelKV(f), ts); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	progress(o, "%s: %d shards merged, %d tensors\n", out, len(f.Shards), len(f.Tensors))
	return nil
}

// notInput refuses outputs that are one of f's files.
func notInput(f *gguf.File, in string, outs []string) error {
	ins := []string{in}
	if f.Shards != nil {
		if prefix, _, count, ok := gguf.ParseShardName(in); ok {
			ins = ins[:0]
			for i := range count {
				ins = append(ins, gguf.ShardName(prefix, i, count))
			}
		}
	}
	for _, p := range ins {
		a, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, q := range outs {
			if b, err := os.Stat(q); err == nil && os.SameFile(a, b) {
				return fmt.Errorf("%w: %s", ErrSameFile, q)
			}
		}
	}
	return nil
}

// writer writes files to temporary names and renames them all at the end.
type writer struct {
	tmps, paths []string
}

func newWriter() *writer { return &writer{} }

func (w *writer) write(path string, kv []gguf.KeyValue, ts []gguf.TensorInfo) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	w.tmps = append(w.tmps, tmp.Name())
	w.paths = append(w.paths, path)
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = gguf.Write(bw, kv, ts, 0); err == nil {
		err = bw.Flush()
	}
	_ = tmp.Chmod(0o644) // CreateTemp made it 0600; not every platform can change it
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("split: writing %s: %w", path, err)
	}
	return nil
}

// commit renames every file written into place.
func (w *writer) commit() error {
	for i, t := range w.tmps {
		if err := os.Rename(t, w.paths[i]); err != nil {
			return err
		}
		w.tmps[i] = ""
	}
	return nil
}

// abort removes the temporary files not renamed.
func (w *writer) abort() {
	for _, t := range w.tmps {
		if t != "" {
			os.Remove(t)
		}
	}
}

func progress(o Options, format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
	}
}
