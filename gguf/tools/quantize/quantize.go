// Package quantize converts GGUF models between tensor types the way
// llama.cpp's llama-quantize does: the same per-tensor choices for each file
// type (the "mixes" such as Q4_K_M, see mixer), the same reference
// quantisers (package quant), the same tensor order and metadata, so that
// from the same F32 input the tensor data is byte-identical to llama-quantize's.
//
// Write streams: the header is computed from the tensor table first, then
// each tensor is converted and written a chunk of rows at a time, so memory
// stays a few megabytes whatever the model size. Tensors come from a Source,
// which is a GGUF file (File) or anything that can produce rows of float32
// (package synth generates random models through it).
package quantize

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
)

// Sentinel errors.
var (
	ErrUnknownType = errors.New("quantize: unknown file type")
	ErrNotModel    = errors.New("quantize: input is not a model")
	ErrRequantize  = errors.New("quantize: requantizing an already quantized tensor is disabled")
	ErrUnsupported = errors.New("quantize: conversion not supported")
	ErrNonFinite   = errors.New("quantize: non-finite weight")
	ErrTensor      = errors.New("quantize: bad tensor")
	ErrSameFile    = errors.New("quantize: output is the input file")
)

// Tensor is one tensor to write: its name, shape (ggml order, Dims[0] is the
// row length) and current type, and how to get at its values.
type Tensor struct {
	Name string
	Dims []uint64
	Type quant.Type

	// Raw holds the tensor's bytes in Type; it is copied as it is when the
	// output type is Type. May be nil when Rows is set.
	Raw []byte
	// Rows fills dst with len(dst)/Dims[0] rows from row first on, as
	// float32. It is called from several goroutines at once (for disjoint
	// rows) and must give the same values every time. May be nil when the
	// tensor is only ever copied.
	Rows func(dst []float32, first int) error
	// Blocks, when set, fills dst with len(dst)/(a row's bytes) rows from
	// row first on directly in the output type typ (the plan's), in place of
	// converting Rows: a generator of random blocks (scripts/synth
	// -random-blocks). Called from one goroutine, rows in order.
	Blocks func(typ quant.Type, dst []byte, first int) error
}

func (t *Tensor) elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Options tune a conversion.
type Options struct {
	Pure            bool      // every quantisable tensor gets the default type: no mix rules
	AllowRequantize bool      // convert tensors that are already quantised (through float32)
	Threads         int       // workers; 0 means runtime.NumCPU()
	Progress        io.Writer // one line per tensor and the fallbacks; nil for none
}

// Plan is the output of a conversion before any data is written.
type Plan struct {
	Tensors []Tensor     // in output order (llama.cpp's: see order)
	Types   []quant.Type // the output type of each
	Notes   []string     // fallbacks
}

// order sorts tensors as llama.cpp's model loader does (its weights_map
// comparer): tensors outside the blocks first, then by block number, each
// group by name.
func order(ts []Tensor) {
	layer := func(name string) int {
		rest, ok := strings.CutPrefix(name, "blk.")
		if !ok {
			return -1
		}
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			return -1
		}
		n, err := strconv.Atoi(rest[:i])
		if err != nil || n < 0 {
			return -1
		}
		return n
	}
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := layer(ts[i].Name), layer(ts[j].Name)
		if a != b {
			return a < b
		}
		return ts[i].Name < ts[j].Name
	})
}

// MakePlan validates the tensors and chooses every output type.
func MakePlan(tensors []Tensor, h Hyper, ft FileType, o Options) (*Plan, error) {
	p := &Plan{Tensors: append([]Tensor(nil), tensors...)}
	order(p.Tensors)
	m := &mixer{ft: ft, h: h, pure: o.Pure, tied: true}
	seen := map[string]bool{}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		if seen[t.Name] {
			return nil, fmt.Errorf("%w: duplicate tensor %q", ErrTensor, t.Name)
		}
		seen[t.Name] = true
		if len(t.Dims) == 0 || len(t.Dims) > gguf.MaxDims {
			return nil, fmt.Errorf("%w: %q has %d dimensions", ErrTensor, t.Name, len(t.Dims))
		}
		for _, d := range t.Dims {
			if d == 0 || d > 1<<40 {
				return nil, fmt.Errorf("%w: %q has dimensions %v", ErrTensor, t.Name, t.Dims)
			}
		}
		if _, err := byteSize(t.Type, t.Dims); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrTensor, t.Name, err)
		}
		switch categoryOf(t.Name) {
		case catAttnV:
			m.nAttnV++
		case catOutput:
			m.tied = false
		}
	}
	for i := range p.Tensors {
		t := &p.Tensors[i]
		typ := m.typeOf(t.Name, t.Dims, t.Type)
		p.Types = append(p.Types, typ)
		if typ == t.Type && t.Raw != nil {
			continue
		}
		if t.Rows == nil {
			return nil, fmt.Errorf("%w: %q: no values to convert from %v to %v", ErrUnsupported, t.Name, t.Type, typ)
		}
		if typ != t.Type && isQuantized(t.Type) && t.Raw != nil && !o.AllowRequantize {
			return nil, fmt.Errorf("%w: %q is %v (allow requantizing to convert it to %v)", ErrRequantize, t.Name, t.Type, typ)
		}
		if !quant.TraitsOf(typ).HasFromFloat() {
			return nil, fmt.Errorf("%w: no quantizer for %v (tensor %q)", ErrUnsupported, typ, t.Name)
		}
		if _, err := byteSize(typ, t.Dims); err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrTensor, t.Name, err)
		}
	}
	p.Notes = m.notes
	return p, nil
}

// byteSize is the size of a tensor of type t: whole blocks per row.
func byteSize(t quant.Type, dims []uint64) (uint64, error) {
	if dims[0] > math.MaxInt32 {
		return 0, fmt.Errorf("row of %d elements", dims[0])
	}
	row, err := quant.RowSize(t, int(dims[0]))
	if err != nil {
		return 0, err
	}
	n := uint64(row)
	for _, d := range dims[1:] {
		if n > (1<<62)/d {
			return 0, fmt.Errorf("dimensions %v overflow", dims)
		}
		n *= d
	}
	return n, nil
}

// Metadata returns the output metadata: kv without split keys, with
// general.quantization_version and general.file_type moved to the end, as
// llama-quantize writes them.
func Metadata(kv []gguf.KeyValue, ft FileType) []gguf.KeyValue {
	out := make([]gguf.KeyValue, 0, len(kv)+2)
	for _, e := range kv {
		switch e.Key {
		case "general.quantization_version", "general.file_type", gguf.KeySplitNo, gguf.KeySplitCount, gguf.KeySplitTensors, gguf.KeySplitID, quant.E8IQ3Key:
			continue
		}
		out = append(out, e)
	}
	if key, own := quant.ExtensionKey(ft.Default); own {
		out = append(out, gguf.KeyValue{Key: key, Value: gguf.Uint32(quant.E8IQ3Version)})
	}
	return append(out,
		gguf.KeyValue{Key: "general.quantization_version", Value: gguf.Uint32(2)},
		gguf.KeyValue{Key: "general.file_type", Value: gguf.Uint32(ft.ID)})
}

// Stats summarises a conversion.
type Stats struct {
	InBytes, OutBytes uint64 // tensor data
	Tensors           int
	Duration          time.Duration
}

// Write writes a GGUF file holding kv (used as it is: see Metadata) and the
// tensors of p converted to their planned types, streaming: the header first,
// then each tensor a chunk of rows at a time.
func Write(w io.Writer, kv []gguf.KeyValue, p *Plan, o Options) (Stats, error) {
	t0 := time.Now()
	var st Stats
	align := uint64(gguf.DefaultAlignment)
	for _, e := range kv {
		if e.Key == gguf.KeyAlignment {
			a, ok := e.Value.Uint()
			if !ok || a == 0 || a&(a-1) != 0 || a > 1<<30 {
				return st, fmt.Errorf("quantize: %s: %w", gguf.KeyAlignment, gguf.ErrAlignment)
			}
			align = a
		}
	}
	// The metadata encoding, borrowed from gguf.Write of a file without
	// tensors: magic, version, two counts (24 bytes), then the pairs.
	var meta bytes.Buffer
	if err := gguf.Write(&meta, kv, nil, 0); err != nil {
		return st, err
	}
	h := []byte(gguf.Magic)
	h = binary.LittleEndian.AppendUint32(h, 3)
	h = binary.LittleEndian.AppendUint64(h, uint64(len(p.Tensors)))
	h = binary.LittleEndian.AppendUint64(h, uint64(len(kv)))
	h = append(h, meta.Bytes()[24:]...)
	sizes := make([]uint64, len(p.Tensors))
	off := uint64(0)
	for i := range p.Tensors {
		t := &p.Tensors[i]
		size, err := byteSize(p.Types[i], t.Dims)
		if err != nil {
			return st, fmt.Errorf("%w: %q: %v", ErrTensor, t.Name, err)
		}
		sizes[i] = size
		h = binary.LittleEndian.AppendUint64(h, uint64(len(t.Name)))
		h = append(h, t.Name...)
		h = binary.LittleEndian.AppendUint32(h, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			h = binary.LittleEndian.AppendUint64(h, d)
		}
		h = binary.LittleEndian.AppendUint32(h, uint32(p.Types[i]))
		h = binary.LittleEndian.AppendUint64(h, off)
		off = alignUp(off+size, align)
	}
	h = append(h, make([]byte, alignUp(uint64(len(h)), align)-uint64(len(h)))...)
	if _, err := w.Write(h); err != nil {
		return st, err
	}
	for _, n := range p.Notes {
		progress(o, "warning: %s\n", n)
	}
	threads := o.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	c := converter{threads: threads}
	pad := make([]byte, align)
	for i := range p.Tensors {
		t := &p.Tensors[i]
		in, _ := byteSize(t.Type, t.Dims)
		st.InBytes += in
		st.OutBytes += sizes[i]
		action := "copy"
		if p.Types[i] != t.Type || t.Raw == nil {
			action = "to " + p.Types[i].String()
		}
		progress(o, "[%4d/%4d] %-36s %-22s %6s %-8s %9.3f MiB -> %9.3f MiB\n", i+1, len(p.Tensors), t.Name,
			fmt.Sprint(t.Dims), t.Type, action, float64(in)/(1<<20), float64(sizes[i])/(1<<20))
		if p.Types[i] == t.Type && t.Raw != nil {
			if uint64(len(t.Raw)) != sizes[i] {
				return st, fmt.Errorf("%w: %q has %d bytes, want %d", ErrTensor, t.Name, len(t.Raw), sizes[i])
			}
			if _, err := w.Write(t.Raw); err != nil {
				return st, err
			}
		} else if t.Blocks != nil {
			if err := writeBlocks(w, t, p.Types[i], sizes[i]); err != nil {
				return st, err
			}
		} else if err := c.convert(w, t, p.Types[i]); err != nil {
			return st, err
		}
		if _, err := w.Write(pad[:alignUp(sizes[i], align)-sizes[i]]); err != nil {
			return st, err
		}
		st.Tensors++
	}
	st.Duration = time.Since(t0)
	progress(o, "tensor data %.2f MiB -> %.2f MiB in %v\n", float64(st.InBytes)/(1<<20), float64(st.OutBytes)/(1<<20), st.Duration.Round(time.Millisecond))
	return st, nil
}

// writeBlocks writes t's size bytes of type typ from t.Blocks, 4 MiB of rows
// at a time.
func writeBlocks(w io.Writer, t *Tensor, typ quant.Type, size uint64) error {
	rowBytes, err := quant.RowSize(typ, int(t.Dims[0]))
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrTensor, t.Name, err)
	}
	rows := int(size) / rowBytes
	per := max(1, (4<<20)/rowBytes)
	buf := make([]byte, min(per, rows)*rowBytes)
	for r := 0; r < rows; r += per {
		n := min(per, rows-r)
		if err := t.Blocks(typ, buf[:n*rowBytes], r); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrTensor, t.Name, err)
		}
		if _, err := w.Write(buf[:n*rowBytes]); err != nil {
			return err
		}
	}
	return nil
}

func progress(o Options, format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
	}
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// chunkElems is how many weights one worker converts at a time: 256 Ki
// floats (1 MiB) keeps memory small and the per-chunk overhead negligible.
const chunkElems = 1 << 18

// converter turns rows of float32 into a type, in parallel chunks; its
// buffers are reused from tensor to tensor.
type converter struct {
	threads int
	f32     [][]float32 // per worker
	out     []byte      // one round of chunks
}

func (c *converter) convert(w io.Writer, t *Tensor, typ quant.Type) error {
	tr := quant.TraitsOf(typ)
	cols := int(t.Dims[0])
	rows := int(t.elements() / uint64(cols))
	rowBytes, _ := quant.RowSize(typ, cols)
	per := max(1, chunkElems/cols) // rows per worker chunk
	if len(c.f32) < c.threads {
		c.f32 = make([][]float32, c.threads)
	}
	for r := 0; r < rows; {
		n := min(rows-r, per*c.threads) // rows this round
		need := n * rowBytes
		if cap(c.out) < need {
			c.out = make([]byte, need)
		}
		out := c.out[:need]
		errs := make([]error, c.threads)
		var wg sync.WaitGroup
		for k := 0; k < c.threads; k++ {
			lo, hi := min(n, k*per), min(n, (k+1)*per)
			if lo == hi {
				break
			}
			if cap(c.f32[k]) < per*cols {
				c.f32[k] = make([]float32, per*cols)
			}
			buf := c.f32[k][:(hi-lo)*cols]
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := t.Rows(buf, r+lo); err != nil {
					errs[k] = fmt.Errorf("quantize: tensor %q: %w", t.Name, err)
					return
				}
				for j, v := range buf {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						errs[k] = fmt.Errorf("%w: tensor %q row %d column %d is %v", ErrNonFinite, t.Name, r+lo+j/cols, j%cols, v)
						return
					}
				}
				tr.FromFloat(out[lo*rowBytes:hi*rowBytes], buf)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		r += n
	}
	return nil
}

// FileTensors returns the tensors of a GGUF file as a Source for Write:
// their bytes, and rows through the type's dequantiser where it has one.
func FileTensors(f *gguf.File) []Tensor {
	ts := make([]Tensor, len(f.Tensors))
	for i := range f.Tensors {
		fi := &f.Tensors[i]
		t := Tensor{Name: fi.Name, Dims: fi.Dims, Type: fi.Type, Raw: fi.Data}
		if tr := quant.TraitsOf(fi.Type); tr.HasDequantize() && len(fi.Dims) > 0 && fi.Dims[0] > 0 {
			cols := int(fi.Dims[0])
			rowBytes, err := quant.RowSize(fi.Type, cols)
			if err == nil {
				data := fi.Data
				t.Rows = func(dst []float32, first int) error {
					n := len(dst) / cols
					tr.Dequantize(dst, data[first*rowBytes:(first+n)*rowBytes])
					return nil
				}
			}
		}
		ts[i] = t
	}
	return ts
}

// HyperOf reads the hyperparameters the mix rules use from a model's
// metadata. general.architecture and its block_count are required.
func HyperOf(f *gguf.File) (Hyper, error) {
	var h Hyper
	arch, err := f.String("general.architecture")
	if err != nil {
		return h, fmt.Errorf("%w: %v", ErrNotModel, err)
	}
	h.Arch = arch
	u := func(k string) (int, bool, error) {
		v, err := f.Uint(arch + "." + k)
		if errors.Is(err, gguf.ErrNotFound) {
			return 0, false, nil
		}
		if err != nil || v > 1<<24 {
			return 0, false, fmt.Errorf("%w: %s.%s: %v", ErrNotModel, arch, k, err)
		}
		return int(v), true, nil
	}
	var ok bool
	if h.Layers, ok, err = u("block_count"); err != nil {
		return h, err
	} else if !ok {
		return h, fmt.Errorf("%w: no %s.block_count", ErrNotModel, arch)
	}
	if h.Heads, _, err = u("attention.head_count"); err != nil {
		return h, err
	}
	h.KVHeads = h.Heads
	if n, ok, err := u("attention.head_count_kv"); err != nil {
		return h, err
	} else if ok {
		h.KVHeads = n
	}
	if h.Experts, _, err = u("expert_count"); err != nil {
		return h, err
	}
	return h, nil
}

// QuantizeFile converts the model in the file in (or the split model one of
// whose shards it is) to file type ft and writes it to out, as one file. The
// output appears only when complete: it is written to a temporary file beside
// out and renamed at the end, and removed on error.
func QuantizeFile(in, out string, ft FileType, o Options) (Stats, error) {
	f, err := gguf.OpenSet(in) // a split model's shard opens them all
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	if a, err := os.Stat(in); err == nil {
		if b, err := os.Stat(out); err == nil && os.SameFile(a, b) {
			return Stats{}, fmt.Errorf("%w: %s", ErrSameFile, out)
		}
	}
	h, err := HyperOf(f)
	if err != nil {
		return Stats{}, err
	}
	if len(f.Tensors) == 0 {
		return Stats{}, fmt.Errorf("%w: %s has no tensors", ErrNotModel, in)
	}
	p, err := MakePlan(FileTensors(f), h, ft, o)
	if err != nil {
		return Stats{}, err
	}
	progress(o, "quantizing %s to %s (%s)\n", in, out, ft.Name)
	return WriteFile(out, Metadata(f.KV, ft), p, o)
}

// WriteFile is Write to a file that appears only when complete (see
// QuantizeFile).
func WriteFile(path string, kv []gguf.KeyValue, p *Plan, o Options) (st Stats, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return st, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if st, err = Write(bw, kv, p, o); err != nil {
		return st, err
	}
	if err = bw.Flush(); err != nil {
		return st, err
	}
	_ = tmp.Chmod(0o644) // CreateTemp made it 0600; not every platform can change it
	if err = tmp.Close(); err != nil {
		return st, err
	}
	return st, os.Rename(tmp.Name(), path)
}
