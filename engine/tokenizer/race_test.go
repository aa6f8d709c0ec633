//go:build race

package tokenizer

// sync.Pool drops items at random under the race detector.
const raceEnabled = true
