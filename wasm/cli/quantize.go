package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/picolm/picolm-wasm/gguf/tools/quantize"
)

const quantizeUsage = `usage: picolm quantize [options] IN.gguf OUT.gguf TYPE

Converts a model to TYPE with llama-quantize's per-tensor choices. OUT appears
only when complete. TYPE is one of:
  %s
  (Q3_K, Q4_K and Q5_K mean the _M mixes, as in llama-quantize)

  --pure               every quantizable tensor gets TYPE: no mix rules
  --allow-requantize   convert tensors that are already quantized
  -j THREADS           worker threads (default: all cores)
`

// runQuantize is the quantize subcommand: args are what follows "quantize".
func runQuantize(args []string, stderr io.Writer) int {
	var o quantize.Options
	fs := flag.NewFlagSet("picolm quantize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintf(stderr, quantizeUsage, strings.Join(quantize.FileTypes(), " ")) }
	fs.BoolVar(&o.Pure, "pure", false, "")
	fs.BoolVar(&o.AllowRequantize, "allow-requantize", false, "")
	fs.IntVar(&o.Threads, "j", 0, "")
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 3 || o.Threads < 0 {
		fs.Usage()
		return 2
	}
	o.Threads = capThreads(o.Threads, stderr)
	ft, err := quantize.ParseFileType(pos[2])
	if err != nil {
		fmt.Fprintln(stderr, "picolm:", err)
		return 2
	}
	o.Progress = stderr
	if _, err := quantize.QuantizeFile(pos[0], pos[1], ft, o); err != nil {
		if errors.Is(err, quantize.ErrRequantize) {
			err = fmt.Errorf("%w; --allow-requantize converts it through float32, at a loss", err)
		}
		fmt.Fprintln(stderr, "picolm:", err)
		return 1
	}
	return 0
}

// parseInterleaved parses fs over args where flags may come before, between
// or after the positional arguments, which it returns; code is the exit
// status to end with (0 after -h, 2 on a bad flag), or -1 to go on.
func parseInterleaved(fs *flag.FlagSet, args []string) (pos []string, code int) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0
			}
			return nil, 2
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, -1
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}
