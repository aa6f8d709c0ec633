// Command probe is the wasip1 program the runner's tests run: each
// subcommand exercises one thing wasmtime-run passes to a program.
//
//	probe args            print argv, one per line
//	probe env NAME        print the environment variable NAME
//	probe echo            copy stdin to stdout, "err" to stderr
//	probe cat PATH        print the file at PATH (exit 1 with the error)
//	probe write PATH TEXT write TEXT to PATH (exit 1 with the error)
//	probe exit N          exit with status N
package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "probe: no subcommand")
		os.Exit(2)
	}
	arg := func(i int) string {
		if len(os.Args) <= i {
			fmt.Fprintln(os.Stderr, "probe: missing argument")
			os.Exit(2)
		}
		return os.Args[i]
	}
	switch os.Args[1] {
	case "args":
		for _, a := range os.Args {
			fmt.Println(a)
		}
	case "env":
		v, ok := os.LookupEnv(arg(2))
		fmt.Printf("%q %v\n", v, ok)
	case "echo":
		io.Copy(os.Stdout, os.Stdin)
		fmt.Fprint(os.Stderr, "err")
	case "cat":
		b, err := os.ReadFile(arg(2))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	case "write":
		if err := os.WriteFile(arg(2), []byte(arg(3)), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "exit":
		n, _ := strconv.Atoi(arg(2))
		os.Exit(n)
	default:
		fmt.Fprintln(os.Stderr, "probe: unknown subcommand", os.Args[1])
		os.Exit(2)
	}
}
