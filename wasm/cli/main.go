// Command picolm runs a Llama-architecture GGUF model from the command line,
// natively or under a WASI runtime (GOOS=wasip1), and converts models:
//
//	picolm [MODEL.gguf] [-p PROMPT] [-n N] [-t TEMP] [-k TOP_P] [-s SEED]
//	       [-c CTX] [-j THREADS] [--json] [--chat] [--cache FILE] [--ids]
//	       [--top-k K] [--min-p P] [--model FILE] [--prompt TEXT]
//	picolm quantize [--pure] [--allow-requantize] [-j N] IN.gguf OUT.gguf TYPE
//	picolm refit TEACHER.gguf STUDENT.gguf OUT.gguf
//	picolm split [--split-max-size N] [--split-max-tensors N] IN.gguf OUT_PREFIX
//	picolm merge IN-00001-of-0000N.gguf OUT.gguf
//
// With no MODEL it runs the embedded stories260K. The prompt comes from
// stdin when -p is absent; --chat formats it as a user turn with the model's
// chat template. Generated text (or, with --ids, token ids) goes to stdout as
// it is produced; load and speed statistics go to stderr. quantize converts a
// model to another weight type (llama-quantize's file types and rules);
// refit re-fits an IQ-quantized model's scales to its F32/F16/BF16 teacher;
// split and merge write a model as llama.cpp's gguf-split does (a split
// model runs from its first shard) and back.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
