// Command picolm runs a Llama-architecture GGUF model from the command line,
// natively or under a WASI runtime (GOOS=wasip1):
//
//	picolm [MODEL.gguf] [-p PROMPT] [-n N] [-t TEMP] [-k TOP_P] [-s SEED]
//	       [-c CTX] [-j THREADS] [--json] [--cache FILE] [--ids]
//
// With no MODEL it runs the embedded stories260K. The prompt comes from
// stdin when -p is absent. Generated text (or, with --ids, token ids) goes to
// stdout as it is produced; load and speed statistics go to stderr.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
