package main

import (
	"fmt"
	"io"
	"math"

	"github.com/picolm/picolm-wasm/gguf/tools/refit"
)

const refitUsage = `usage: picolm refit TEACHER.gguf STUDENT.gguf OUT.gguf

Re-fits the block scales (d and the sub-block scales) of the student's
IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ4_XS and IQ4_NL tensors to the
teacher's F32/F16/BF16 weights, keeping every code byte. OUT is the student
file with only those scale bytes changed; it appears only when complete.
Prints each tensor's RMSE against the teacher before and after.
`

// runRefit is the refit subcommand: args are what follows "refit".
func runRefit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		fmt.Fprint(stderr, refitUsage)
		return 0
	}
	if len(args) != 3 {
		fmt.Fprint(stderr, refitUsage)
		return 2
	}
	stats, err := refit.File(args[0], args[1], args[2], refit.Options{Progress: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "picolm refit:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%-32s %-8s %12s %12s %8s %s\n", "tensor", "type", "rmse before", "rmse after", "change", "blocks changed")
	var se0, se1 float64
	var n int
	for _, s := range stats {
		if !s.Refit {
			continue
		}
		fmt.Fprintf(stdout, "%-32s %-8v %12.6g %12.6g %+7.2f%% %d/%d\n", s.Name, s.Type, s.Before, s.After, pct(s.Before, s.After), s.Changed, s.Blocks)
		se0 += s.Before * s.Before * float64(s.Weights)
		se1 += s.After * s.After * float64(s.Weights)
		n += s.Weights
	}
	if n > 0 {
		b, a := math.Sqrt(se0/float64(n)), math.Sqrt(se1/float64(n))
		fmt.Fprintf(stdout, "%-32s %-8s %12.6g %12.6g %+7.2f%%\n", "all refit tensors", "", b, a, pct(b, a))
	}
	return 0
}

func pct(before, after float64) float64 {
	if before == 0 {
		return 0
	}
	return 100 * (after - before) / before
}
