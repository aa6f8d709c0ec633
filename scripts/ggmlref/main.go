//go:build !wasm

// Command ggmlref compares package quant's kernels with the kernels of a
// built ggml CPU backend, bit for bit: harness.c (built here with the C
// compiler) loads the library and runs its exported functions on the
// inputs this program writes (harness/harness.c, built here with the C compiler). A tool for finding where the engine's
// arithmetic leaves llama.cpp's, outside CI (it needs a llama.cpp build):
//
//	go run ./scripts/ggmlref dots Q6_K IQ1_S ...   ggml_vec_dot_<type>_<vec dot type> on random blocks against TraitsOf(t).Dot
//	go run ./scripts/ggmlref q8k                   quantize_row_q8_K against Q8_K's FromFloat
//	go run ./scripts/ggmlref exp [-all]            ggml_vec_soft_max_f32 (max 0) and ggml_vec_swiglu_f32 (g = 1) against
//	                                               ExpShift and SwiGLU on every 257th float32 bit pattern, or all 2^32
//
// -lib names the library (default: node-llama-cpp 3.21.1's zen4 variant in
// the bench cache, ~/.cache/picolm-bench/npm). Build this program with
// GOEXPERIMENT=simd to check the AVX2 kernels, without it for the portable
// ones. See README.md.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/picolm/picolm-wasm/quant"
)

func main() {
	home, _ := os.UserHomeDir()
	lib := flag.String("lib", filepath.Join(home, ".cache/picolm-bench/npm/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-zen4.so"), "the ggml CPU backend library")
	records := flag.Int("n", 2000, "random dots (or Q8_K rows) per type")
	all := flag.Bool("all", false, "exp: every float32 bit pattern, not every 257th")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: ggmlref [-lib LIB.so] dots TYPE... | q8k | exp [-all]")
		os.Exit(2)
	}
	harness, err := buildHarness()
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(filepath.Dir(harness))
	run := func(kernel string) (*exec.Cmd, io.WriteCloser, io.Reader) {
		cmd := exec.Command(harness, *lib, kernel)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(*lib))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			fail(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			fail(err)
		}
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		return cmd, in, bufio.NewReaderSize(out, 1<<20)
	}
	switch flag.Arg(0) {
	case "dots":
		for _, name := range flag.Args()[1:] {
			dots(run, name, *records)
		}
	case "q8k":
		q8k(run, *records)
	case "exp":
		exps(run, *all)
	default:
		fail(fmt.Errorf("unknown command %q", flag.Arg(0)))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "ggmlref:", err)
	os.Exit(1)
}

// buildHarness compiles harness/harness.c into a temporary directory.
func buildHarness() (string, error) {
	dir, err := os.MkdirTemp("", "ggmlref")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "harness")
	out, err := exec.Command("cc", "-O2", "-o", bin, filepath.Join("scripts", "ggmlref", "harness", "harness.c"), "-ldl").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("cc scripts/ggmlref/harness/harness.c (run from the repository root): %v\n%s", err, out)
	}
	return bin, nil
}

type runner func(kernel string) (*exec.Cmd, io.WriteCloser, io.Reader)

func typeByName(s string) quant.Type {
	for t := range quant.Type(64) {
		if tr := quant.TraitsOf(t); tr.Valid() && tr.Name == s {
			return t
		}
	}
	fail(fmt.Errorf("no type %s", s))
	return 0
}

// ggmlName is a type's name in ggml's function names: q6_K, iq1_s, q8_0.
func ggmlName(s string) string {
	s = strings.ToLower(s)
	if strings.HasSuffix(s, "_k") {
		s = s[:len(s)-1] + "K"
	}
	return s
}

// scaleOffset is the offset of the fp16 block scale of the formats whose
// blocks are filled with random bytes (no quantiser in package quant, or
// random codes are what the engine's tests use), so that it is finite.
var scaleOffset = map[string]int{"IQ1_S": 0, "IQ2_XS": 0, "IQ2_XXS": 0, "IQ2_S": 0, "IQ3_S": 0, "IQ3_XXS": 0, "TQ1_0": 52, "TQ2_0": 64}

// dots compares records random dots of type name with ggml's.
func dots(run runner, name string, records int) {
	t := typeByName(name)
	tr, at := quant.TraitsOf(t), quant.TraitsOf(quant.TraitsOf(t).VecDotType)
	rng := rand.New(rand.NewPCG(1, uint64(t)))
	var in bytes.Buffer
	var ours []float32
	for range records {
		nb := 1 + rng.IntN(8)
		n := nb * tr.BlockSize
		w := make([]byte, nb*tr.TypeSize)
		x := make([]float32, n)
		if off, random := scaleOffset[name]; random || !tr.HasFromFloat() {
			for i := range w {
				w[i] = byte(rng.Uint32())
			}
			if random {
				for b := range nb {
					binary.LittleEndian.PutUint16(w[b*tr.TypeSize+off:], quant.FP32ToFP16(float32(0.001+rng.Float64()*0.05)))
				}
			}
		} else {
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 0.05)
			}
			tr.FromFloat(w, x)
		}
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		a := make([]byte, n/at.BlockSize*at.TypeSize)
		at.FromFloat(a, x)
		binary.Write(&in, binary.LittleEndian, [3]int32{int32(n), int32(len(w)), int32(len(a))})
		in.Write(w)
		in.Write(a)
		ours = append(ours, tr.Dot(n, w, a))
	}
	cmd, stdin, stdout := run("vec_dot_" + ggmlName(name) + "_" + ggmlName(tr.VecDotType.String()))
	go func() { stdin.Write(in.Bytes()); stdin.Close() }()
	out, err := io.ReadAll(stdout)
	if err != nil || cmd.Wait() != nil || len(out) != 4*len(ours) {
		fail(fmt.Errorf("%s: the harness failed (%d bytes back)", name, len(out)))
	}
	differ := 0
	for i, o := range ours {
		g := math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		if math.Float32bits(g) != math.Float32bits(o) && !(g != g && o != o) {
			if differ < 3 {
				fmt.Printf("  %s dot %d: ggml %g (%#08x), quant %g (%#08x)\n", name, i, g, math.Float32bits(g), o, math.Float32bits(o))
			}
			differ++
		}
	}
	fmt.Printf("%s: %d of %d dots differ from ggml's\n", name, differ, len(ours))
}

// q8k compares records rows quantized to Q8_K with ggml's quantize_row_q8_K.
func q8k(run runner, records int) {
	rng := rand.New(rand.NewPCG(2, 3))
	var in bytes.Buffer
	var ours []byte
	for range records {
		n := 256 * (1 + rng.IntN(4))
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()))
		}
		binary.Write(&in, binary.LittleEndian, int32(n))
		binary.Write(&in, binary.LittleEndian, x)
		q := make([]byte, n/256*292)
		quant.TraitsOf(quant.Q8_K).FromFloat(q, x)
		ours = append(ours, q...)
	}
	cmd, stdin, stdout := run("quantize_row_q8_K")
	go func() { stdin.Write(in.Bytes()); stdin.Close() }()
	out, err := io.ReadAll(stdout)
	if err != nil || cmd.Wait() != nil || len(out) != len(ours) {
		fail(fmt.Errorf("q8k: the harness failed (%d bytes back)", len(out)))
	}
	differ := 0
	for i := 0; i < len(out); i += 292 {
		if !bytes.Equal(out[i:i+292], ours[i:i+292]) {
			differ++
		}
	}
	fmt.Printf("Q8_K: %d of %d blocks differ from ggml's\n", differ, len(out)/292)
}

// exps runs the float32 bit patterns (all, or every 257th) through ggml's
// softmax and SwiGLU loops and quant's, in rows of 2^20 (whole blocks of
// 16: ggml_v_expf throughout), comparing every output and each softmax
// row's sum.
func exps(run runner, all bool) {
	stride := uint64(257)
	if all {
		stride = 1
	}
	const row = 1 << 20
	for _, kernel := range []string{"vec_soft_max_f32", "vec_swiglu_f32"} {
		cmd, stdin, stdout := run(kernel)
		x := make([]float32, row)
		got := make([]float32, row)
		ones := make([]float32, row)
		for i := range ones {
			ones[i] = 1
		}
		buf := make([]byte, 4*row+8)
		differ, checked := 0, 0
		for b := uint64(0); b < 1<<32; b += stride * row {
			for i := range x {
				x[i] = math.Float32frombits(uint32(b + uint64(i)*stride))
			}
			binary.Write(stdin, binary.LittleEndian, int32(row))
			binary.Write(stdin, binary.LittleEndian, x)
			n := 4 * row
			if kernel == "vec_soft_max_f32" {
				n += 8
			}
			if _, err := io.ReadFull(stdout, buf[:n]); err != nil {
				fail(fmt.Errorf("%s: %v", kernel, err))
			}
			copy(got, x)
			var sum float64
			if kernel == "vec_soft_max_f32" {
				sum = quant.ExpShift(got, 0, 0)
				if g := math.Float64frombits(binary.LittleEndian.Uint64(buf[4*row:])); math.Float64bits(g) != math.Float64bits(sum) && !(g != g && sum != sum) {
					fmt.Printf("  %s row from %#08x: sum %g, ggml %g\n", kernel, b, sum, g)
					differ++
				}
			} else {
				quant.SwiGLU(got, ones)
			}
			for i, o := range got {
				g := math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
				if math.Float32bits(g) != math.Float32bits(o) && !(g != g && o != o) {
					if differ < 5 {
						fmt.Printf("  %s(%g): ggml %g, quant %g\n", kernel, x[i], g, o)
					}
					differ++
				}
			}
			checked += row
		}
		stdin.Close()
		cmd.Wait()
		fmt.Printf("%s: %d of %d values differ from ggml's\n", kernel, differ, checked)
	}
}
