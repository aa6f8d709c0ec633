//go:build goexperiment.simd

package quant

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used (the
// benchmark locks itself to its thread), so that kernels can be compared on
// a machine shared with other jobs: time slices lost to them do not count.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkKernelCPU reports the thread CPU time per row of the Dot,
// DotRows (MatVec), DotN and DotRowsN (MatMul) kernels of every kernel set
// (the wall-clock ns/op of BenchmarkDot and BenchmarkDotN is unreliable
// when other processes share the cores). The process's kernels are
// Dot/Q4_0 and so on, the other sets' are named after them (Go/Dot/Q4_0).
func BenchmarkKernelCPU(b *testing.B) {
	sets := kernelSets()
	for si, ks := range sets {
		prefix := ks.name + "/"
		if si == len(sets)-1 {
			prefix = ""
		}
		benchKernelCPU(b, prefix, ks)
	}
}

func benchKernelCPU(b *testing.B, prefix string, ks kernelSet) {
	for _, t := range simdTypes {
		tr := ks.traits(t)
		w, act := benchData(b, t)
		rowBytes := len(w) / benchRows
		b.Run(prefix+"Dot/"+t.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var sink float32
			c0 := threadCPU()
			for b.Loop() {
				for r := range benchRows {
					sink += tr.Dot(benchCols, w[r*rowBytes:(r+1)*rowBytes], act)
				}
			}
			b.ReportMetric(float64(threadCPU()-c0)/float64(b.N*benchRows), "cpu-ns/row")
			_ = sink
		})
		b.Run(prefix+"MatVec/"+t.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			out := make([]float32, benchRows)
			c0 := threadCPU()
			for b.Loop() {
				tr.MatVec(benchCols, w, act, out)
			}
			b.ReportMetric(float64(threadCPU()-c0)/float64(b.N*benchRows), "cpu-ns/row")
		})
		b.Run(prefix+"DotN/"+t.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			acts := make([][]byte, MaxDotN)
			for i := range acts {
				acts[i] = act
			}
			out := make([]float32, MaxDotN)
			c0 := threadCPU()
			for b.Loop() {
				for r := range benchRows {
					tr.DotEach(benchCols, w[r*rowBytes:(r+1)*rowBytes], acts, out)
				}
			}
			b.ReportMetric(float64(threadCPU()-c0)/float64(b.N*benchRows*MaxDotN), "cpu-ns/row-act")
		})
		b.Run(prefix+"MatMul/"+t.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// MaxDotN distinct activations, as in a prefill batch (the
			// activations of DotN above are one, always in L1)
			acts := make([][]byte, MaxDotN)
			outs := make([][]float32, MaxDotN)
			vt := TraitsOf(tr.VecDotType)
			rng := rand.New(rand.NewPCG(uint64(t), 8))
			src := make([]float32, benchCols)
			for i := range acts {
				for j := range src {
					src[j] = float32(rng.NormFloat64())
				}
				acts[i] = make([]byte, len(act))
				vt.FromFloat(acts[i], src)
				outs[i] = make([]float32, benchRows)
			}
			c0 := threadCPU()
			for b.Loop() {
				tr.MatMul(benchCols, w, acts, outs, 0)
			}
			b.ReportMetric(float64(threadCPU()-c0)/float64(b.N*benchRows*MaxDotN), "cpu-ns/row-act")
		})
	}
}
