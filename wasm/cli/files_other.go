//go:build !wasip1

package main

// wasiPathError is err: only under WASI is a file out of reach for want of
// a preopened directory (files_wasip1.go).
func wasiPathError(err error) error { return err }
