// Package refit re-fits the scales of a codebook-quantised model against
// its full-precision teacher with the codes frozen: every code byte (grid
// indices, signs, IQ4 nibbles) stays as the quantiser wrote it, and only each
// block's fp16 scale d and its sub-block scales s (see package
// quant/codebook) move, to minimise the squared error to the teacher's
// weights.
//
// Per block, with v the frozen integer values and w the teacher's weights,
// weight_i = d·g(s_k)·v_i where g is the format's s factor (Eff(d,s) = d·g(s)).
// With P_k = Σ w_i·v_i and Q_k = Σ v_i² over sub-block k:
//
//  1. coordinate descent in real d: d = Σ g_k·P_k / Σ g_k²·Q_k (closed form
//     for d given s), then each s_k = the grid value nearest g* = P_k/(d·Q_k)
//     (exact: the error is a convex quadratic in g_k, symmetric about g*),
//     repeated until s stops changing (at most 32 rounds);
//  2. d rounded to fp16: the candidates are the block's own d, the rounded
//     d and its two fp16 neighbours, each with its best s (step 1's rule);
//     then a walk to neighbouring fp16 values while the error decreases;
//  3. the block's bytes change only if the exact float32 error (weights as
//     ggml dequantises them) of the best candidate is strictly smaller than
//     the block's own, so a block that cannot improve keeps its bytes, and a
//     refit that changes nothing writes its input byte for byte.
//
// The output file is the student file with those bytes patched in place:
// same metadata, tensor order, offsets and padding, so every reader of the
// student reads the output.
package refit

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/picolm/picolm-wasm/gguf"
	"github.com/picolm/picolm-wasm/quant"
	"github.com/picolm/picolm-wasm/quant/codebook"
)

// Sentinel errors.
var (
	ErrMismatch = errors.New("refit: teacher and student differ")
	ErrTeacher  = errors.New("refit: teacher tensor is not F32, F16 or BF16")
	ErrSameFile = errors.New("refit: output is an input file")
)

// TensorStats reports one tensor's refit.
type TensorStats struct {
	Name            string
	Type            quant.Type
	Weights         int
	Blocks, Changed int     // blocks, and blocks whose d or s changed
	Before, After   float64 // RMSE against the teacher
	Refit           bool    // false: a type refit does not handle, copied as it is
}

// Options tune a refit.
type Options struct {
	Progress io.Writer // one line per tensor; nil for none
}

// Block re-fits one block's d and s in place given the teacher's weights w
// and the block's values v (codebook.Format.Values), and returns the
// squared error before and after. blk is left unchanged unless the error
// strictly decreases.
func Block(f *codebook.Format, blk []byte, w []float32, v []int8) (before, after float64) {
	var r refitter
	return r.block(f, blk, w, v)
}

type refitter struct {
	p, q   [codebook.MaxSubs]float64
	s, s0  [codebook.MaxSubs]uint8
	bs, ts [codebook.MaxSubs]uint8
}

// g is the s factor: Eff(d, s) = d·g(s).
func g(f *codebook.Format, s uint8) float64 {
	return float64(f.Eff(0x3c00, s)) // d = 1: exact
}

// err is the exact squared error of the block with fields d, s.
func errOf(f *codebook.Format, d uint16, s []uint8, w []float32, v []int8) float64 {
	var e float64
	for i, x := range w {
		r := float64(f.Eff(d, s[i/f.Sub])*float32(v[i])) - float64(x)
		e += r * r
	}
	return e
}

// bestS sets s[k] to the best scale of sub-block k for the fp16 d (keeping
// s[k] when every value gives the same error).
func (r *refitter) bestS(f *codebook.Format, d float64, s []uint8) {
	if f.SMax == 0 {
		return
	}
	a := g(f, 1) - g(f, 0) // g(s) = a·s + g(0)
	for k := range f.Subs() {
		if d == 0 || r.q[k] == 0 || math.IsInf(d, 0) || math.IsNaN(d) {
			continue
		}
		gs := r.p[k] / (d * r.q[k])
		x := math.Round((gs - g(f, 0)) / a)
		s[k] = uint8(max(0, min(float64(f.SMax), x)))
	}
}

func (r *refitter) block(f *codebook.Format, blk []byte, w []float32, v []int8) (before, after float64) {
	n := f.Subs()
	if n == 0 {
		n = 1
	}
	f.S(blk, r.s0[:])
	d0 := f.D(blk)
	before = errOf(f, d0, r.s0[:], w, v)
	for k := range n {
		r.p[k], r.q[k] = 0, 0
		for i := k * f.Sub; i < (k+1)*f.Sub; i++ {
			r.p[k] += float64(w[i]) * float64(v[i])
			r.q[k] += float64(v[i]) * float64(v[i])
		}
	}
	// 1. Coordinate descent in real d.
	r.s = r.s0
	var dc float64
	for range 32 {
		var num, den float64
		for k := range n {
			gk := g(f, r.s[k])
			num += gk * r.p[k]
			den += gk * gk * r.q[k]
		}
		if den == 0 {
			break
		}
		dc = num / den
		prev := r.s
		r.bestS(f, dc, r.s[:])
		if r.s == prev {
			break
		}
	}
	// 2. fp16 candidates, then a walk to better neighbours.
	bestD, bestE := d0, before
	r.bs = r.s0
	try := func(d uint16) bool {
		if d&0x7c00 == 0x7c00 { // infinity or NaN
			return false
		}
		r.ts = r.s0
		r.bestS(f, float64(quant.FP16ToFP32(d)), r.ts[:])
		if e := errOf(f, d, r.ts[:], w, v); e < bestE {
			bestD, bestE, r.bs = d, e, r.ts
			return true
		}
		return false
	}
	try(d0)
	if !math.IsNaN(dc) && !math.IsInf(dc, 0) {
		dr := quant.FP32ToFP16(float32(dc))
		try(dr)
		try(dr + 1)
		try(dr - 1)
	}
	for range 64 {
		if !try(bestD+1) && !try(bestD-1) {
			break
		}
	}
	if bestE < before {
		f.SetD(blk, bestD)
		if err := f.SetS(blk, r.bs[:]); err != nil {
			panic(err) // bestS clamps to the range
		}
		return before, bestE
	}
	return before, before
}

// Tensor re-fits every block of a tensor's data in place against the
// teacher's weights (rows of cols weights, len(teacher) = rows·cols).
func Tensor(f *codebook.Format, data []byte, teacher []float32) (TensorStats, error) {
	st := TensorStats{Type: f.Type, Weights: len(teacher), Refit: true}
	if len(teacher)%f.Block != 0 || len(data) != len(teacher)/f.Block*f.Bytes {
		return st, fmt.Errorf("%w: %d bytes of %v for %d weights", ErrMismatch, len(data), f.Type, len(teacher))
	}
	var before, after float64
	err := tensorRows(f, data, teacher, &st, &before, &after)
	st.Before, st.After = rmse(before, len(teacher)), rmse(after, len(teacher))
	return st, err
}

func rmse(se float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return math.Sqrt(se / float64(n))
}

// tensorRows re-fits data in chunks of at most 64 blocks.
func tensorRows(f *codebook.Format, data []byte, teacher []float32, st *TensorStats, before, after *float64) error {
	const chunk = 64
	var r refitter
	v := make([]int8, chunk*f.Block)
	for b0 := 0; b0 < len(teacher)/f.Block; b0 += chunk {
		nb := min(chunk, len(teacher)/f.Block-b0)
		bytes := data[b0*f.Bytes : (b0+nb)*f.Bytes]
		if err := f.Values(v[:nb*f.Block], bytes); err != nil {
			return err
		}
		for b := range nb {
			blk := bytes[b*f.Bytes : (b+1)*f.Bytes]
			w := teacher[(b0+b)*f.Block : (b0+b+1)*f.Block]
			e0, e1 := r.block(f, blk, w, v[b*f.Block:(b+1)*f.Block])
			*before += e0
			*after += e1
			st.Blocks++
			if e1 < e0 {
				st.Changed++
			}
		}
	}
	return nil
}

// File re-fits the codebook-format tensors of the student GGUF against the
// teacher GGUF (same tensor names and shapes; the teacher's in F32, F16 or
// BF16) and writes the result to out: the student file with only d and s
// bytes changed. Tensors of other types are copied as they are. out appears
// only when complete.
func File(teacherPath, studentPath, out string, o Options) (stats []TensorStats, err error) {
	for _, in := range []string{teacherPath, studentPath} {
		if a, err1 := os.Stat(in); err1 == nil {
			if b, err2 := os.Stat(out); err2 == nil && os.SameFile(a, b) {
				return nil, fmt.Errorf("%w: %s", ErrSameFile, out)
			}
		}
	}
	tf, err := gguf.Open(teacherPath)
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	sf, err := gguf.Open(studentPath)
	if err != nil {
		return nil, err
	}
	defer sf.Close()

	// Check everything before writing anything.
	for i := range sf.Tensors {
		t := &sf.Tensors[i]
		if _, err := codebook.Of(t.Type); err != nil {
			continue
		}
		tt, ok := tf.Tensor(t.Name)
		if !ok {
			return nil, fmt.Errorf("%w: the teacher has no tensor %q", ErrMismatch, t.Name)
		}
		if !slices.Equal(tt.Dims, t.Dims) {
			return nil, fmt.Errorf("%w: tensor %q is %v in the teacher, %v in the student", ErrMismatch, t.Name, tt.Dims, t.Dims)
		}
		if tt.Type != quant.F32 && tt.Type != quant.F16 && tt.Type != quant.BF16 {
			return nil, fmt.Errorf("%w: %q is %v", ErrTeacher, t.Name, tt.Type)
		}
	}

	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp*")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(sf.Bytes()); err != nil {
		return nil, err
	}
	for i := range sf.Tensors {
		t := &sf.Tensors[i]
		st := TensorStats{Name: t.Name, Type: t.Type, Weights: int(t.Elements())}
		f, ferr := codebook.Of(t.Type)
		if ferr != nil {
			stats = append(stats, st)
			progress(o, "%-32s %-8v kept\n", t.Name, t.Type)
			continue
		}
		tt, _ := tf.Tensor(t.Name)
		st, err = refitTensor(tmp, int64(sf.DataOffset+t.Offset), f, t, tt)
		if err != nil {
			return nil, fmt.Errorf("refit: tensor %q: %w", t.Name, err)
		}
		st.Name = t.Name
		stats = append(stats, st)
		progress(o, "%-32s %-8v rmse %.6g -> %.6g (%d of %d blocks changed)\n", t.Name, t.Type, st.Before, st.After, st.Changed, st.Blocks)
	}
	if err = tmp.Sync(); err != nil {
		return nil, err
	}
	if err = tmp.Close(); err != nil {
		return nil, err
	}
	if err = os.Rename(tmp.Name(), out); err != nil {
		return nil, err
	}
	return stats, nil
}

// refitTensor re-fits a tensor a slab of rows at a time (bounded memory)
// and writes the changed bytes at off in w.
func refitTensor(w io.WriterAt, off int64, f *codebook.Format, t, tt *gguf.TensorInfo) (TensorStats, error) {
	st := TensorStats{Type: t.Type, Weights: int(t.Elements()), Refit: true}
	tr := quant.TraitsOf(tt.Type)
	const slab = 1 << 16 // weights per step
	n := len(t.Data) / f.Bytes * f.Block
	teacher := make([]float32, min(n, slab))
	data := make([]byte, min(n, slab)/f.Block*f.Bytes)
	var before, after float64
	for w0 := 0; w0 < n; w0 += slab {
		m := min(slab, n-w0)
		src := t.Data[w0/f.Block*f.Bytes : (w0+m)/f.Block*f.Bytes]
		buf := data[:len(src)]
		copy(buf, src)
		tr.Dequantize(teacher[:m], tt.Data[w0*tr.TypeSize:(w0+m)*tr.TypeSize])
		for _, x := range teacher[:m] {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return st, fmt.Errorf("%w: the teacher has a non-finite weight", ErrTeacher)
			}
		}
		if err := tensorRows(f, buf, teacher[:m], &st, &before, &after); err != nil {
			return st, err
		}
		if string(buf) != string(src) {
			if _, err := w.WriteAt(buf, off+int64(w0/f.Block*f.Bytes)); err != nil {
				return st, err
			}
		}
	}
	st.Before, st.After = rmse(before, n), rmse(after, n)
	return st, nil
}

func progress(o Options, format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
	}
}
