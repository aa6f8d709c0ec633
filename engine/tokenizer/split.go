package tokenizer

import "unicode"

// Pre-tokenizer scanners. Each one splits the code points [lo, hi) of a
// segment into words and appends the end index of every word; between them
// they cover the segment. They mirror llama.cpp's unicode_regex_split_custom_*
// functions, which implement these regular expressions:
//
//	GPT-2:  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//	Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	         ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	Qwen2:  Llama 3's with \p{N} instead of \p{N}{1,3}
//
// A vocabulary with several expressions (SmolLM: \p{N}, then GPT-2) applies
// them in turn, each inside the segments the previous one left; text an
// expression does not match stays a segment of its own, as in llama.cpp's
// unicode_regex_split.

type splitter struct {
	runes  []rune
	flags  []uint8
	lo, hi int // the current segment
}

// at returns the class of code point i, 0 outside the segment.
func (s *splitter) at(i int) uint8 {
	if i < s.lo || i >= s.hi {
		return 0
	}
	return s.flags[i]
}

// cpt returns code point i, -1 outside the segment.
func (s *splitter) cpt(i int) rune {
	if i < s.lo || i >= s.hi {
		return -1
	}
	return s.runes[i]
}

// contraction reports the length of 's 't 'm 'd (2) or 're 've 'll (3) at
// pos, lower-casing the letters if fold.
func (s *splitter) contraction(pos int, fold bool) int {
	if s.cpt(pos) != '\'' || pos+1 >= s.hi {
		return 0
	}
	low := func(r rune) rune {
		if fold {
			return unicode.ToLower(r)
		}
		return r
	}
	c1 := low(s.cpt(pos + 1))
	if c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd' {
		return 2
	}
	if pos+2 < s.hi {
		c2 := low(s.cpt(pos + 2))
		if c1 == 'r' && c2 == 'e' || c1 == 'v' && c2 == 'e' || c1 == 'l' && c2 == 'l' {
			return 3
		}
	}
	return 0
}

const wordClass = cpSpace | cpLetter | cpNumber

// gpt2 splits [lo, hi) with GPT-2's expression.
func (s *splitter) gpt2(ends []int32) []int32 {
	for pos := s.lo; pos < s.hi; {
		if n := s.contraction(pos, false); n > 0 {
			pos += n
			ends = append(ends, int32(pos))
			continue
		}
		c, f := s.cpt(pos), s.at(pos)
		f2 := f
		if c == ' ' {
			f2 = s.at(pos + 1)
		}
		switch {
		case f2&cpLetter != 0: // ' ?\p{L}+'
			if c == ' ' {
				pos++
			}
			for s.at(pos)&cpLetter != 0 {
				pos++
			}
		case f2&cpNumber != 0: // ' ?\p{N}+'
			if c == ' ' {
				pos++
			}
			for s.at(pos)&cpNumber != 0 {
				pos++
			}
		case f2&wordClass == 0 && f2 != 0: // ' ?[^\s\p{L}\p{N}]+'
			if c == ' ' {
				pos++
			}
			for g := s.at(pos); g&wordClass == 0 && g != 0; g = s.at(pos) {
				pos++
			}
		default:
			pos = s.spaces(pos, false)
		}
		ends = append(ends, int32(pos))
	}
	return ends
}

// spaces matches the whitespace alternatives at pos and returns the end:
// with newlines (Llama 3) '\s*[\r\n]+' first, then '\s+(?!\S)', then '\s+';
// a code point nothing matches is a word of its own.
func (s *splitter) spaces(pos int, newlines bool) int {
	n, lastNL := 0, 0
	for s.at(pos+n)&cpSpace != 0 {
		if c := s.cpt(pos + n); newlines && (c == '\r' || c == '\n') {
			lastNL = pos + n + 1
		}
		n++
	}
	switch {
	case lastNL > 0:
		return lastNL
	case n > 1 && s.cpt(pos+n) >= 0: // followed by a non-space: leave it its space
		return pos + n - 1
	case n > 0:
		return pos + n
	}
	return pos + 1
}

// llama3 splits [lo, hi) with Llama 3's expression; maxDigits is 3 for
// Llama 3 and 1 for Qwen2.
func (s *splitter) llama3(ends []int32, maxDigits int) []int32 {
	for pos := s.lo; pos < s.hi; {
		if n := s.contraction(pos, true); n > 0 {
			pos += n
			ends = append(ends, int32(pos))
			continue
		}
		c, f := s.cpt(pos), s.at(pos)
		// '[^\r\n\p{L}\p{N}]?\p{L}+'
		if !(c == '\r' || c == '\n' || f&cpNumber != 0) && (f&cpLetter != 0 || s.at(pos+1)&cpLetter != 0) {
			pos++
			for s.at(pos)&cpLetter != 0 {
				pos++
			}
			ends = append(ends, int32(pos))
			continue
		}
		// '\p{N}{1,maxDigits}'
		if f&cpNumber != 0 {
			ini := pos
			for s.at(pos)&cpNumber != 0 {
				pos++
				if pos-ini >= maxDigits {
					ends = append(ends, int32(pos))
					ini = pos
				}
			}
			if pos > ini {
				ends = append(ends, int32(pos))
			}
			continue
		}
		// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
		f2 := f
		if c == ' ' {
			f2 = s.at(pos + 1)
		}
		if f2&wordClass == 0 && f != 0 {
			if c == ' ' {
				pos++
			}
			for g := s.at(pos); g&wordClass == 0 && g != 0; g = s.at(pos) {
				pos++
			}
			for c2 := s.cpt(pos); c2 == '\r' || c2 == '\n'; c2 = s.cpt(pos) {
				pos++
			}
			ends = append(ends, int32(pos))
			continue
		}
		pos = s.spaces(pos, true)
		ends = append(ends, int32(pos))
	}
	return ends
}

// each makes every code point of class cls a word of its own ('\p{N}').
func (s *splitter) each(ends []int32, cls uint8) []int32 {
	for pos := s.lo; pos < s.hi; pos++ {
		if s.flags[pos]&cls != 0 {
			if pos > s.lo && (len(ends) == 0 || int(ends[len(ends)-1]) != pos) {
				ends = append(ends, int32(pos))
			}
			ends = append(ends, int32(pos+1))
		}
	}
	if len(ends) == 0 || int(ends[len(ends)-1]) != s.hi {
		ends = append(ends, int32(s.hi))
	}
	return ends
}

// runs makes every maximal run of code points in class (by in) a word.
func (s *splitter) runs(ends []int32, in func(r rune, f uint8) bool) []int32 {
	for pos := s.lo; pos < s.hi; {
		start := pos
		want := in(s.runes[pos], s.flags[pos])
		for pos < s.hi && in(s.runes[pos], s.flags[pos]) == want {
			pos++
		}
		_ = start
		ends = append(ends, int32(pos))
	}
	return ends
}

// digits3 splits out every '[0-9][0-9][0-9]' match, leftmost first.
func (s *splitter) digits3(ends []int32) []int32 {
	last := s.lo
	for pos := s.lo; pos+3 <= s.hi; {
		if isDigit(s.runes[pos]) && isDigit(s.runes[pos+1]) && isDigit(s.runes[pos+2]) {
			if pos > last {
				ends = append(ends, int32(pos))
			}
			pos += 3
			ends = append(ends, int32(pos))
			last = pos
			continue
		}
		pos++
	}
	if last < s.hi {
		ends = append(ends, int32(s.hi))
	}
	return ends
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// split runs the pre-tokenizer over all of sp.runes and returns the word
// ends, in st's scratch.
func (p preType) split(sp *splitter, st *encodeState) []int32 {
	n := len(sp.runes)
	segs := append(st.segs[:0], int32(n))
	next := st.segs2[:0]
	pass := func(f func(ends []int32) []int32) {
		next = next[:0]
		lo := 0
		for _, end := range segs {
			sp.lo, sp.hi = lo, int(end)
			next = f(next)
			lo = int(end)
		}
		segs, next = next, segs
	}
	gpt2 := func(e []int32) []int32 { return sp.gpt2(e) }
	switch p {
	case preGPT2:
		pass(gpt2)
	case preLlama3:
		pass(func(e []int32) []int32 { return sp.llama3(e, 3) })
	case preQwen2:
		pass(func(e []int32) []int32 { return sp.llama3(e, 1) })
	case preSmolLM:
		pass(func(e []int32) []int32 { return sp.each(e, cpNumber) })
		pass(gpt2)
	default: // llama.cpp's default expressions
		pass(func(e []int32) []int32 {
			return sp.runs(e, func(r rune, f uint8) bool {
				return f&cpPunct != 0 || r == '$' || r == '+' || r == '<' || r == '=' || r == '>' || r == '^' || r == '~' || r == '|'
			})
		})
		pass(gpt2)
		pass(func(e []int32) []int32 { return sp.runs(e, func(_ rune, f uint8) bool { return f&cpNumber != 0 }) })
		pass(sp.digits3)
	}
	st.segs, st.segs2 = segs, next
	return segs
}
