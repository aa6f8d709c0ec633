package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/picolm/picolm-wasm/gguf/tools/split"
)

const splitUsage = `usage: picolm split [--split-max-size N(K|M|G)] [--split-max-tensors N] IN.gguf OUT_PREFIX
       picolm merge IN-00001-of-0000N.gguf OUT.gguf

split writes IN (a file, or any shard of a split model) as the split model
OUT_PREFIX-00001-of-0000N.gguf, ..., in llama.cpp's gguf-split layout: the
tensors in order, a new shard when the next tensor would pass a limit.
  --split-max-size N     tensor data per shard, in K, M or G (10^3, 10^6, 10^9 bytes)
  --split-max-tensors N  tensors per shard (default 128 when no limit is given)
merge writes the split model one of whose shards is IN as one file, without
the split keys; OUT must not exist. Outputs appear only when complete.
`

// runSplit is the split and merge subcommands: args are what follows the
// subcommand's name.
func runSplit(merge bool, args []string, stderr io.Writer) int {
	name := "picolm split"
	if merge {
		name = "picolm merge"
	}
	var o split.Options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, splitUsage) }
	if !merge {
		fs.Func("split-max-size", "", func(s string) (err error) { o.MaxBytes, err = split.ParseSize(s); return err })
		fs.IntVar(&o.MaxTensors, "split-max-tensors", 0, "")
	}
	pos, code := parseInterleaved(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 2 || o.MaxTensors < 0 {
		fs.Usage()
		return 2
	}
	o.Progress = stderr
	var err error
	if merge {
		err = split.Merge(pos[0], pos[1], o)
	} else {
		_, err = split.Split(pos[0], pos[1], o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
