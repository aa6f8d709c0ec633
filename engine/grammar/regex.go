package grammar

// JSON Schema patterns (ECMAScript regular expressions, as ajv compiles them with the u flag) to GBNF.
// The grammar generates whole strings the pattern matches, written as JSON string contents: a quote,
// backslash, tab, newline or carriage return in the pattern becomes its JSON escape; other control
// characters are left out (a subset of the matches). Supported: literals, escapes (\d \w \s and their
// negations, \n \r \t \f \v \0, \xHH, \uHHHH, \u{...}, escaped punctuation), '.', classes with ranges and
// negation, groups (capturing, (?:...) and named), alternation, and the quantifiers * + ? {m} {m,} {m,n}
// (lazy or not). ^ and $ are accepted at the ends of the top-level alternatives; a pattern without them
// still gets a full match, which contains a match. Refused: backreferences, lookaround, word boundaries,
// anchors elsewhere.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

type reParser struct {
	src   []rune
	pos   int
	depth int
}

func regexGBNF(pattern string) (string, error) {
	p := &reParser{src: []rune(pattern)}
	e, err := p.alt(true)
	if err != nil {
		return "", err
	}
	if p.pos < len(p.src) {
		return "", fmt.Errorf("unbalanced ')' at %d", p.pos)
	}
	return e, nil
}

func (p *reParser) peek() rune {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return -1
}

func (p *reParser) alt(top bool) (string, error) {
	var alts []string
	for {
		s, err := p.seq(top)
		if err != nil {
			return "", err
		}
		alts = append(alts, s)
		if p.peek() != '|' {
			break
		}
		p.pos++
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return strings.Join(alts, " | "), nil
}

func (p *reParser) seq(top bool) (string, error) {
	var items []string
	start := p.pos
	for {
		c := p.peek()
		switch c {
		case -1, '|', ')':
			if len(items) == 0 {
				return `""`, nil
			}
			return strings.Join(items, " "), nil
		case '^':
			if !top || p.pos != start {
				return "", fmt.Errorf("the anchor ^ is supported only at the start")
			}
			p.pos++
			continue
		case '$':
			p.pos++
			if n := p.peek(); !top || n != -1 && n != '|' {
				return "", fmt.Errorf("the anchor $ is supported only at the end")
			}
			continue
		}
		atom, err := p.atom()
		if err != nil {
			return "", err
		}
		q, err := p.quantifier()
		if err != nil {
			return "", err
		}
		items = append(items, atom+q)
	}
}

// quantifier parses an optional quantifier into GBNF's notation.
func (p *reParser) quantifier() (string, error) {
	q := ""
	switch c := p.peek(); c {
	case '*', '+', '?':
		p.pos++
		q = string(c)
	case '{':
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end >= len(p.src) {
			return "", errors.New("'{' without '}'")
		}
		body := string(p.src[p.pos+1 : end])
		lo, hi, ok := strings.Cut(body, ",")
		m, err := strconv.Atoi(lo)
		if err != nil || m < 0 || m > MaxRepeat {
			return "", fmt.Errorf("repetition {%s} is not a count up to %d", body, MaxRepeat)
		}
		q = fmt.Sprintf("{%d}", m)
		if ok {
			q = fmt.Sprintf("{%d,}", m)
			if hi != "" {
				n, err := strconv.Atoi(hi)
				if err != nil || n < m || n > MaxRepeat {
					return "", fmt.Errorf("repetition {%s} is not a range up to %d", body, MaxRepeat)
				}
				q = fmt.Sprintf("{%d,%d}", m, n)
			}
		}
		p.pos = end + 1
	default:
		return "", nil
	}
	if p.peek() == '?' { // lazy: the same strings
		p.pos++
	}
	switch p.peek() {
	case '*', '+', '?', '{':
		return "", errors.New("a quantifier after a quantifier")
	}
	return q, nil
}

var (
	reDigit = []crange{{'0', '9'}}
	reWord  = []crange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}
	reSpace = []crange{{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
		{0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}}
	reDot = complement([]crange{{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}})
)

func (p *reParser) atom() (string, error) {
	c := p.src[p.pos]
	switch c {
	case '(':
		p.pos++
		if p.depth++; p.depth > maxNesting {
			return "", errors.New("groups nested too deep")
		}
		if p.peek() == '?' {
			rest := string(p.src[p.pos:min(p.pos+3, len(p.src))])
			switch {
			case strings.HasPrefix(rest, "?:"):
				p.pos += 2
			case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"), strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"):
				return "", errors.New("lookaround is not supported")
			case strings.HasPrefix(rest, "?<"):
				end := slices.Index(p.src[p.pos:], '>')
				if end < 0 {
					return "", errors.New("unterminated group name")
				}
				p.pos += end + 1
			default:
				return "", errors.New("unsupported group (?")
			}
		}
		e, err := p.alt(false)
		if err != nil {
			return "", err
		}
		if p.peek() != ')' {
			return "", errors.New("missing ')'")
		}
		p.pos++
		p.depth--
		return "(" + e + ")", nil
	case '[':
		p.pos++
		rs, err := p.class()
		if err != nil {
			return "", err
		}
		return charSet(rs)
	case '.':
		p.pos++
		return charSet(reDot)
	case '\\':
		rs, err := p.escape(false)
		if err != nil {
			return "", err
		}
		return charSet(rs)
	case '*', '+', '?', '{':
		return "", fmt.Errorf("%q with nothing to repeat", c)
	case ']', '}':
		return "", fmt.Errorf("lone %q", c)
	}
	p.pos++
	return charSet([]crange{{c, c}})
}

// escape parses a backslash escape into the characters it stands for.
func (p *reParser) escape(inClass bool) ([]crange, error) {
	p.pos++ // '\'
	if p.pos >= len(p.src) {
		return nil, errors.New("'\\' at the end")
	}
	c := p.src[p.pos]
	p.pos++
	one := func(r rune) ([]crange, error) { return []crange{{r, r}}, nil }
	switch c {
	case 'd':
		return reDigit, nil
	case 'D':
		return complement(reDigit), nil
	case 'w':
		return reWord, nil
	case 'W':
		return complement(reWord), nil
	case 's':
		return reSpace, nil
	case 'S':
		return complement(reSpace), nil
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 't':
		return one('\t')
	case 'f':
		return one('\f')
	case 'v':
		return one('\v')
	case '0':
		return one(0)
	case 'b':
		if inClass {
			return one('\b')
		}
		return nil, errors.New(`word boundaries (\b) are not supported`)
	case 'B':
		return nil, errors.New(`word boundaries (\B) are not supported`)
	case 'x', 'u':
		n := 2
		if c == 'u' {
			n = 4
			if p.peek() == '{' {
				end := slices.Index(p.src[p.pos:], '}')
				if end < 0 {
					return nil, errors.New(`unterminated \u{`)
				}
				v, err := strconv.ParseUint(string(p.src[p.pos+1:p.pos+end]), 16, 32)
				if err != nil || v > 0x10FFFF {
					return nil, errors.New(`bad \u{...} escape`)
				}
				p.pos += end + 1
				return one(rune(v))
			}
		}
		if p.pos+n > len(p.src) {
			return nil, fmt.Errorf(`\%c needs %d hex digits`, c, n)
		}
		v, err := strconv.ParseUint(string(p.src[p.pos:p.pos+n]), 16, 32)
		if err != nil {
			return nil, fmt.Errorf(`\%c needs %d hex digits`, c, n)
		}
		p.pos += n
		return one(rune(v))
	}
	if '1' <= c && c <= '9' {
		return nil, errors.New("backreferences are not supported")
	}
	if strings.ContainsRune(`^$\.*+?()[]{}|/-`, c) {
		return one(c)
	}
	return nil, fmt.Errorf(`unknown escape \%c`, c)
}

// class parses a character class after '['.
func (p *reParser) class() ([]crange, error) {
	neg := false
	if p.peek() == '^' {
		neg = true
		p.pos++
	}
	var rs []crange
	item := func() ([]crange, error) {
		if p.peek() == '\\' {
			return p.escape(true)
		}
		c := p.src[p.pos]
		p.pos++
		return []crange{{c, c}}, nil
	}
	for p.peek() != ']' {
		if p.pos >= len(p.src) {
			return nil, errors.New("unterminated class")
		}
		lo, err := item()
		if err != nil {
			return nil, err
		}
		if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, err := item()
			if err != nil {
				return nil, err
			}
			if len(lo) != 1 || len(hi) != 1 || lo[0].lo != lo[0].hi || hi[0].lo != hi[0].hi {
				return nil, errors.New("a class range between classes")
			}
			if hi[0].lo < lo[0].lo {
				return nil, errors.New("a backwards class range")
			}
			rs = append(rs, crange{lo[0].lo, hi[0].lo})
			continue
		}
		rs = append(rs, lo...)
	}
	p.pos++
	if neg {
		return complement(rs), nil
	}
	return rs, nil
}

// charSet is a GBNF expression for one character of rs as JSON string contents.
func charSet(rs []crange) (string, error) {
	plain := intersectRanges(rs, complement([]crange{{'"', '"'}, {'\\', '\\'}, {0, 0x1F}, {0x7F, 0x7F}}))
	var alts []string
	if len(plain) > 0 {
		alts = append(alts, gbnfClass(plain))
	}
	has := func(c rune) bool { return len(intersectRanges(rs, []crange{{c, c}})) > 0 }
	for _, e := range []struct {
		c   rune
		lit string
	}{{'"', `"\\\""`}, {'\\', `"\\\\"`}, {'\n', `"\\n"`}, {'\r', `"\\r"`}, {'\t', `"\\t"`}} {
		if has(e.c) {
			alts = append(alts, e.lit)
		}
	}
	switch len(alts) {
	case 0:
		return "", errors.New("a character that a JSON string cannot hold without a \\u escape")
	case 1:
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " | ") + ")", nil
}

// intersectRanges returns the code points in both a and b, sorted and merged.
func intersectRanges(a, b []crange) []crange {
	a, b = complement(complement(a)), complement(complement(b)) // sorted and merged
	var out []crange
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].lo, b[j].lo), min(a[i].hi, b[j].hi)
		if lo <= hi {
			out = append(out, crange{lo, hi})
		}
		if a[i].hi < b[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}
