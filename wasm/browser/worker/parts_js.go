//go:build js

package main

// A model split over Workers that each read only their own rows (no
// whole-file buffer): the page names the model's files (a URL, read by HTTP
// Range requests, or a Blob: a picked File or the OPFS cache's disk-backed
// File, read by slices), the lead plans the split from the files' headers
// (planParts: their first bytes, fetched by Range and grown until the
// header fits), and every Worker then parses the header from those
// prefixes and reads its tensor rows through partsReader straight into its
// Go heap (host.LoadPartsFiles, host.LoadShardParts). web/worker.js's
// picolmSource does the fetching and slicing.

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall/js"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/wasm/browser/host"
)

// readChunk is the most one read (a Range request, a Blob slice) asks for:
// JS holds one chunk per Worker at a time.
const readChunk = 16 << 20

// probeBytes is the first read of a file's header, which grows fourfold
// until the header parses (a 32k-token vocabulary's header is about 0.7
// MB, a 128k one's about 3 MB).
const probeBytes = 64 << 10

// errNoRange marks a server that answered a Range request with the whole
// file (or without Content-Range): the page falls back to a plain download.
var errNoRange = errors.New("the server does not support HTTP Range requests")

// partsReader reads the files of a model laid end to end: each file a URL
// (Range requests) or a Blob (slices), chunk by chunk, copied into p.
type partsReader struct {
	srcs   []js.Value
	starts []int64 // each file's offset end to end
	sizes  []int64
	names  []string
	src    js.Value    // picolmSource: read(src, start, end) -> Promise<bytes read into its stage>
	onRead func(n int) // progress, after each chunk
	// onStart, when set, is told of each chunk's read before it starts:
	// its offset in the files end to end and its length.
	onStart func(off int64, n int)
}

func newPartsReader(files js.Value, fs host.Files) (*partsReader, error) {
	src := js.Global().Get("picolmSource")
	if src.Type() != js.TypeObject {
		return nil, errors.New("no picolmSource: the worker script is not web/worker.js")
	}
	if files.Type() != js.TypeObject || files.Length() != len(fs.Sizes) {
		return nil, fmt.Errorf("%d model files for %d sizes", files.Length(), len(fs.Sizes))
	}
	r := &partsReader{src: src, sizes: fs.Sizes, names: fs.Names, onRead: func(int) {}}
	off := int64(0)
	for i := range fs.Sizes {
		r.srcs = append(r.srcs, files.Index(i))
		r.starts = append(r.starts, off)
		off += fs.Sizes[i]
	}
	return r, nil
}

func (r *partsReader) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for len(p) > 0 {
		i := len(r.starts) - 1
		for i > 0 && r.starts[i] > off {
			i--
		}
		at := off - r.starts[i]
		if off < 0 || at >= r.sizes[i] {
			return done, io.EOF
		}
		n := int(min(int64(len(p)), r.sizes[i]-at, readChunk))
		if r.onStart != nil {
			r.onStart(off, n)
		}
		if err := r.readFile(i, at, p[:n]); err != nil {
			return done, err
		}
		r.onRead(n)
		p, off, done = p[n:], off+int64(n), done+n
	}
	return done, nil
}

// readFile reads len(p) bytes of file i from at on.
func (r *partsReader) readFile(i int, at int64, p []byte) error {
	v, err := await(r.src.Call("read", r.srcs[i], float64(at), float64(at+int64(len(p)))))
	if err != nil {
		if strings.Contains(err.Error(), "picolm:no-range") {
			return fmt.Errorf("%s: %w", r.names[i], errNoRange)
		}
		return fmt.Errorf("reading %s: %w", r.names[i], err)
	}
	if got := v.Int(); got != len(p) {
		return fmt.Errorf("reading %s: %d bytes from %d, want %d", r.names[i], got, at, len(p))
	}
	js.CopyBytesToGo(p, r.src.Get("stage")) // len(p) bytes: the stage holds at least that many
	return nil
}

// filesMsg reads a message's model files: {files: [URL or Blob], names,
// sizes (or, to planParts, none: the sizes come from the first reads)}.
func filesMsg(msg js.Value) (js.Value, host.Files) {
	files := msg.Get("files")
	var fs host.Files
	sizes := msg.Get("sizes")
	for i := range min(files.Length(), gguf.MaxShards+1) {
		fs.Names = append(fs.Names, strAt(msg.Get("names"), i))
		if sizes.Type() == js.TypeObject {
			fs.Sizes = append(fs.Sizes, int64(flt(sizes.Index(i), 0)))
		}
	}
	return files, fs
}

// prefixesMsg copies the header prefixes of a message into Go.
func prefixesMsg(msg js.Value) [][]byte {
	ps := msg.Get("prefixes")
	if ps.Type() != js.TypeObject {
		return nil
	}
	out := make([][]byte, min(ps.Length(), gguf.MaxShards+1))
	for i := range out {
		u := js.Global().Get("Uint8Array").New(ps.Index(i))
		out[i] = make([]byte, u.Get("byteLength").Int())
		js.CopyBytesToGo(out[i], u)
	}
	return out
}

// planParts plans a model loaded by parts: {name, files, names, workers,
// auto, limit}. For each file it reads the first probeBytes (a URL's size comes
// from the Range reply's Content-Range) and grows the prefix fourfold until
// the header parses, then plans (host.PlanHeaders). Replies plan {workers,
// maxWorkers, need: [bytes], sizes, prefixes: [ArrayBuffer]} or, for a
// server without Range support, plan {noRange: true}.
func (b *bridge) planParts(msg js.Value) {
	id := msg.Get("id")
	files, fs := filesMsg(msg)
	if len(fs.Names) == 0 || len(fs.Names) > gguf.MaxShards {
		b.fail(id, fmt.Errorf("%w: %d model files", host.ErrLoading, len(fs.Names)))
		return
	}
	probe := js.Global().Get("picolmSource")
	prefixes := make([][]byte, len(fs.Names))
	fs.Sizes = make([]int64, len(fs.Names))
	for i := range fs.Names {
		v, err := await(probe.Call("probe", files.Index(i), probeBytes))
		if err != nil {
			b.fail(id, fmt.Errorf("reading %s: %w", fs.Names[i], err))
			return
		}
		if v.Get("noRange").Truthy() {
			b.reply(id, "plan", map[string]any{"noRange": true})
			return
		}
		size := int64(flt(v.Get("size"), 0))
		pre := make([]byte, min(max(num(v.Get("n"), 0), 0), probeBytes))
		js.CopyBytesToGo(pre, probe.Get("stage"))
		fs.Sizes[i] = size
		r, err := newPartsReader(js.Global().Get("Array").Call("of", files.Index(i)), host.Files{Names: fs.Names[i : i+1], Sizes: []int64{size}})
		if err != nil {
			b.fail(id, err)
			return
		}
		for {
			f, err := gguf.ParseHeaderPrefix(pre, size)
			if err == nil {
				prefixes[i] = pre[:min(int64(f.DataOffset), int64(len(pre)))]
				break
			}
			if int64(len(pre)) >= size || !(errors.Is(err, gguf.ErrTruncated) || errors.Is(err, gguf.ErrLength)) {
				b.fail(id, fmt.Errorf("%s: %w", fs.Names[i], err))
				return
			}
			more := make([]byte, min(size, 4*int64(len(pre)))-int64(len(pre)))
			if _, err := r.ReadAt(more, int64(len(pre))); err != nil {
				b.fail(id, err)
				return
			}
			pre = append(pre, more...)
		}
	}
	p, _, err := host.PlanHeaders(str(msg.Get("name")), prefixes, fs, num(msg.Get("workers"), 1), msg.Get("auto").Truthy(), num(msg.Get("limit"), 1))
	if err != nil {
		b.fail(id, err)
		return
	}
	need, sizes, pres := make([]any, len(p.Need)), make([]any, len(fs.Sizes)), make([]any, len(prefixes))
	for i, v := range p.Need {
		need[i] = float64(v)
	}
	for i, pre := range prefixes {
		sizes[i] = float64(fs.Sizes[i])
		u := js.Global().Get("Uint8Array").New(len(pre))
		js.CopyBytesToJS(u, pre)
		pres[i] = u.Get("buffer")
	}
	b.reply(id, "plan", map[string]any{"workers": p.Workers, "maxWorkers": p.MaxWorkers, "need": need, "sizes": sizes, "prefixes": pres})
}

// release drops the staging buffer of the Worker's reads (once loaded).
func (r *partsReader) release() { r.src.Call("release") }

// progressEvery posts {type: progress, id, loaded} after each read of r.
func (b *bridge) progressEvery(r *partsReader, id js.Value) {
	loaded := 0.0
	r.onRead = func(n int) {
		loaded += float64(n)
		b.reply(id, "progress", map[string]any{"loaded": loaded})
	}
}
