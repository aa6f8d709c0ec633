package grammar

// GBNF: llama.cpp's grammar syntax, parsed and compiled once into flat rules (vocabulary-independent).
//
// The syntax accepted is llama.cpp's:
//
//	rule        name ::= alternates           (name: letters, digits, '-' and '_')
//	alternates  sequence ( '|' sequence )*     (an empty sequence matches the empty string)
//	element     "literal" | [class] | [^class] | . | name | ( alternates )
//	repetition  element* element+ element? element{m} element{m,} element{m,n}
//	escapes     \xHH \uHHHH \UHHHHHHHH \t \r \n \\ \" \[ \] (in literals and classes)
//	comments    '#' to the end of the line
//
// A rule ends at the end of its line; newlines are allowed after '::=' and '|' and anywhere inside
// parentheses. The start rule is root. Characters are Unicode code points; the matcher reads UTF-8.
//
// Compiled form: every alternative is a run of elements ending in eEnd, all in one slice. A character
// element holds a sorted list of disjoint code point ranges (a negated class is stored as its complement,
// '.' as every code point); a literal is one character element per code point. Groups and repetitions
// become generated rules: x* is r ::= x r | ε, x+ is x x*, x? is r ::= x | ε, x{m,n} is m copies of x
// followed by n-m nested optionals. Compilation refuses, with the line and column: undefined rules, rules
// defined twice, a missing root, left recursion (a rule that can reach itself without consuming a
// character, the matcher would loop), rules that can never end, and grammars over the size limits.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrGrammar is returned (wrapped) for a grammar that cannot be parsed or compiled.
var ErrGrammar = errors.New("grammar")

// Limits on a grammar's compiled size: repetition counts, and the total of elements (literal characters,
// references, ends of alternatives) after repetitions are expanded.
const (
	MaxRepeat   = 10000
	MaxElements = 1 << 20
	maxSource   = 16 << 20
	maxNesting  = 256
)

const (
	eEnd  uint8 = iota // end of an alternative
	eChar              // one code point in ranges[a:b]
	eRef               // rule a
)

type elem struct {
	kind uint8
	a, b int32
}

type crange struct{ lo, hi rune }

// gRule is one rule: its alternatives start at elems[alts[i]].
type gRule struct {
	name      string
	alts      []int32
	line, col int // where it is defined (generated rules: where their group or repetition is)
	generated bool
}

// GBNF is a compiled grammar. It is read-only and safe for concurrent use; each generation matches it
// with its own Matcher.
type GBNF struct {
	elems  []elem
	ranges []crange
	rules  []gRule
	root   int32
}

// Rules returns the number of rules (generated ones included) and of compiled elements.
func (g *GBNF) Rules() (rules, elements int) { return len(g.rules), len(g.elems) }

type gbnfParser struct {
	src       string
	pos       int
	g         *GBNF
	ids       map[string]int32
	refLine   map[int32][2]int // first reference of each rule, for "undefined" errors
	defined   []bool
	cur       string // the rule being parsed, for messages
	nesting   int
	nameCount map[string]int
}

// ParseGBNF parses and compiles a grammar in llama.cpp's GBNF syntax. Every error wraps ErrGrammar and
// names the line and column (and the rule) where it is.
func ParseGBNF(src string) (*GBNF, error) {
	g, err := parseGBNF(src)
	if err != nil {
		return nil, err
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	return g, nil
}

// parseGBNF parses and compiles src without check's refusals (left recursion, rules that never end).
func parseGBNF(src string) (*GBNF, error) {
	if len(src) > maxSource {
		return nil, fmt.Errorf("%w: the grammar is %d bytes, over the limit of %d", ErrGrammar, len(src), maxSource)
	}
	if !utf8.ValidString(src) {
		i := 0
		for i < len(src) {
			r, n := utf8.DecodeRuneInString(src[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		p := &gbnfParser{src: src}
		return nil, p.errAt(i, "the grammar is not valid UTF-8")
	}
	p := &gbnfParser{src: src, g: &GBNF{}, ids: map[string]int32{}, refLine: map[int32][2]int{}, nameCount: map[string]int{}}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.g, nil
}

// lineCol returns the 1-based line and column (in characters) of byte offset i.
func (p *gbnfParser) lineCol(i int) (int, int) {
	i = min(i, len(p.src))
	line := 1 + strings.Count(p.src[:i], "\n")
	start := strings.LastIndexByte(p.src[:i], '\n') + 1
	return line, 1 + utf8.RuneCountInString(p.src[start:i])
}

func (p *gbnfParser) errAt(i int, format string, args ...any) error {
	line, col := p.lineCol(i)
	msg := fmt.Sprintf(format, args...)
	if p.cur != "" {
		return fmt.Errorf("%w: line %d column %d (rule %s): %s", ErrGrammar, line, col, p.cur, msg)
	}
	return fmt.Errorf("%w: line %d column %d: %s", ErrGrammar, line, col, msg)
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// space skips blanks and comments, and newlines when newlineOK.
func (p *gbnfParser) space(newlineOK bool) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' && p.src[p.pos] != '\r' {
				p.pos++
			}
		case (c == '\n' || c == '\r') && newlineOK:
			p.pos++
		default:
			return
		}
	}
}

func (p *gbnfParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *gbnfParser) name() string {
	start := p.pos
	for p.pos < len(p.src) && isWordChar(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// ruleID returns the id of the named rule, creating it (undefined) on first sight.
func (p *gbnfParser) ruleID(name string, at int) int32 {
	if id, ok := p.ids[name]; ok {
		return id
	}
	id := int32(len(p.g.rules))
	line, col := p.lineCol(at)
	p.g.rules = append(p.g.rules, gRule{name: name, line: line, col: col})
	p.defined = append(p.defined, false)
	p.ids[name] = id
	p.refLine[id] = [2]int{line, col}
	return id
}

// newRule makes a generated rule named after the rule being parsed.
func (p *gbnfParser) newRule(at int) int32 {
	base := p.cur
	for {
		p.nameCount[base]++
		name := base + "~" + strconv.Itoa(p.nameCount[base]) // '~' is not a name character: no clash
		if _, taken := p.ids[name]; !taken {
			id := p.ruleID(name, at)
			p.g.rules[id].generated = true
			p.defined[id] = true
			return id
		}
	}
}

func (p *gbnfParser) parse() error {
	p.space(true)
	for p.pos < len(p.src) {
		if err := p.rule(); err != nil {
			return err
		}
		p.space(true)
	}
	p.cur = ""
	root, ok := p.ids["root"]
	if !ok || !p.defined[root] {
		return fmt.Errorf("%w: no root rule (the grammar starts at the rule named root)", ErrGrammar)
	}
	p.g.root = root
	for id, d := range p.defined {
		if !d {
			at := p.refLine[int32(id)]
			return fmt.Errorf("%w: line %d column %d: undefined rule %s", ErrGrammar, at[0], at[1], p.g.rules[id].name)
		}
	}
	return nil
}

func (p *gbnfParser) rule() error {
	start := p.pos
	name := p.name()
	if name == "" {
		p.cur = ""
		return p.errAt(p.pos, "expected a rule name, found %s", p.what())
	}
	p.cur = name
	id := p.ruleID(name, start)
	if p.defined[id] {
		r := p.g.rules[id]
		return p.errAt(start, "rule %s is defined twice (first at line %d column %d)", name, r.line, r.col)
	}
	line, col := p.lineCol(start)
	p.g.rules[id].line, p.g.rules[id].col = line, col
	p.defined[id] = true
	p.space(false)
	if !strings.HasPrefix(p.src[p.pos:], "::=") {
		return p.errAt(p.pos, "expected ::= after the rule name, found %s", p.what())
	}
	p.pos += 3
	p.space(true)
	alts, err := p.alternates(false)
	if err != nil {
		return err
	}
	p.g.rules[id].alts = alts
	switch c := p.peek(); c {
	case 0, '\n', '\r':
		return nil
	default:
		return p.errAt(p.pos, "expected the end of the line, found %s", p.what())
	}
}

// what describes the input at p.pos for an error message.
func (p *gbnfParser) what() string {
	if p.pos >= len(p.src) {
		return "the end of the grammar"
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	switch r {
	case '\n', '\r':
		return "the end of the line"
	}
	return strconv.QuoteRune(r)
}

// alternates parses sequences separated by '|' and returns their start positions in g.elems.
func (p *gbnfParser) alternates(nested bool) ([]int32, error) {
	var alts []int32
	for {
		seq, err := p.sequence(nested)
		if err != nil {
			return nil, err
		}
		alts = append(alts, int32(len(p.g.elems)))
		for _, e := range append(seq, elem{kind: eEnd}) {
			if err := p.emit(e); err != nil {
				return nil, err
			}
		}
		if p.peek() != '|' {
			return alts, nil
		}
		p.pos++
		p.space(true)
	}
}

// emit checks the element budget before appending e to the grammar.
func (p *gbnfParser) emit(e elem) error {
	if len(p.g.elems) >= MaxElements {
		return p.errAt(p.pos, "the grammar compiles to more than %d elements", MaxElements)
	}
	p.g.elems = append(p.g.elems, e)
	return nil
}

// sequence parses one alternative's elements (not yet placed in g.elems: nested groups are compiled into
// their own rules while it is parsed, so the sequence is collected apart and appended whole).
func (p *gbnfParser) sequence(nested bool) ([]elem, error) {
	var seq []elem
	last := -1 // start in seq of the last item (for repetition)
	for {
		at := p.pos
		c := p.peek()
		switch {
		case c == '"':
			p.pos++
			last = len(seq)
			for p.peek() != '"' {
				if p.pos >= len(p.src) || p.peek() == '\n' || p.peek() == '\r' {
					return nil, p.errAt(at, "unterminated literal")
				}
				r, err := p.char()
				if err != nil {
					return nil, err
				}
				seq = append(seq, p.class([]crange{{r, r}}, false))
			}
			p.pos++
		case c == '[':
			p.pos++
			neg := false
			if p.peek() == '^' {
				neg = true
				p.pos++
			}
			var rs []crange
			for p.peek() != ']' {
				if p.pos >= len(p.src) {
					return nil, p.errAt(at, "unterminated character class")
				}
				lo, err := p.char()
				if err != nil {
					return nil, err
				}
				hi := lo
				if p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
					p.pos++
					rat := p.pos
					if hi, err = p.char(); err != nil {
						return nil, err
					}
					if hi < lo {
						return nil, p.errAt(rat, "range %q-%q is backwards", lo, hi)
					}
				}
				rs = append(rs, crange{lo, hi})
			}
			p.pos++
			if len(rs) == 0 && !neg {
				return nil, p.errAt(at, "empty character class [] matches nothing")
			}
			last = len(seq)
			seq = append(seq, p.class(rs, neg))
		case c == '.':
			p.pos++
			last = len(seq)
			seq = append(seq, p.class(nil, true))
		case isWordChar(c):
			name := p.name()
			last = len(seq)
			seq = append(seq, elem{kind: eRef, a: p.ruleID(name, at)})
		case c == '(':
			p.pos++
			if p.nesting++; p.nesting > maxNesting {
				return nil, p.errAt(at, "groups nested more than %d deep", maxNesting)
			}
			p.space(true)
			id := p.newRule(at)
			alts, err := p.alternates(true)
			if err != nil {
				return nil, err
			}
			p.g.rules[id].alts = alts
			if p.peek() != ')' {
				return nil, p.errAt(p.pos, "expected ')' to close the group at line %d column %d, found %s", lineOf(p, at), colOf(p, at), p.what())
			}
			p.pos++
			p.nesting--
			last = len(seq)
			seq = append(seq, elem{kind: eRef, a: id})
		case c == '*' || c == '+' || c == '?' || c == '{':
			if last < 0 {
				return nil, p.errAt(at, "%q with nothing before it to repeat", c)
			}
			lo, hi, err := p.repetition()
			if err != nil {
				return nil, err
			}
			var err2 error
			if seq, err2 = p.repeat(seq, last, lo, hi, at); err2 != nil {
				return nil, err2
			}
			last = -1 // x** is refused, as by llama.cpp
		case c == '<' || c == '!':
			return nil, p.errAt(at, "token references (<...>, !<...>) are not supported")
		default:
			return seq, nil
		}
		p.space(nested)
	}
}

func lineOf(p *gbnfParser, i int) int { l, _ := p.lineCol(i); return l }
func colOf(p *gbnfParser, i int) int  { _, c := p.lineCol(i); return c }

// repetition parses * + ? {m} {m,} {m,n} into (min, max), max -1 for unbounded.
func (p *gbnfParser) repetition() (int, int, error) {
	at := p.pos
	switch p.src[p.pos] {
	case '*':
		p.pos++
		return 0, -1, nil
	case '+':
		p.pos++
		return 1, -1, nil
	case '?':
		p.pos++
		return 0, 1, nil
	}
	p.pos++ // '{'
	p.space(false)
	num := func() (int, error) {
		s := p.pos
		for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
			p.pos++
		}
		if s == p.pos {
			return 0, p.errAt(p.pos, "expected a number in the repetition, found %s", p.what())
		}
		if p.pos-s > 9 {
			return 0, p.errAt(s, "repetition count %s is over the limit of %d", p.src[s:p.pos], MaxRepeat)
		}
		n, _ := strconv.Atoi(p.src[s:p.pos])
		if n > MaxRepeat {
			return 0, p.errAt(s, "repetition count %d is over the limit of %d", n, MaxRepeat)
		}
		p.space(false)
		return n, nil
	}
	lo, err := num()
	if err != nil {
		return 0, 0, err
	}
	hi := lo
	if p.peek() == ',' {
		p.pos++
		p.space(false)
		hi = -1
		if c := p.peek(); '0' <= c && c <= '9' {
			if hi, err = num(); err != nil {
				return 0, 0, err
			}
			if hi < lo {
				return 0, 0, p.errAt(at, "repetition {%d,%d}: the maximum is below the minimum", lo, hi)
			}
		}
	}
	if p.peek() != '}' {
		return 0, 0, p.errAt(p.pos, "expected '}' to end the repetition, found %s", p.what())
	}
	p.pos++
	return lo, hi, nil
}

// repeat replaces seq[last:] (one item) by its repetition {lo,hi}.
func (p *gbnfParser) repeat(seq []elem, last, lo, hi, at int) ([]elem, error) {
	item := slices.Clone(seq[last:])
	seq = seq[:last]
	if len(item) == 0 { // "" repeated is still the empty string
		return seq, nil
	}
	if len(item) > 1 { // a literal of several characters: one rule
		id := p.newRule(at)
		p.g.rules[id].alts = []int32{int32(len(p.g.elems))}
		for _, e := range item {
			if err := p.emit(e); err != nil {
				return nil, err
			}
		}
		if err := p.emit(elem{kind: eEnd}); err != nil {
			return nil, err
		}
		item = []elem{{kind: eRef, a: id}}
	}
	x := item[0]
	n := lo
	if hi > lo {
		n++ // the optional tail
	}
	if len(seq)+n > MaxElements || len(p.g.elems)+2*(hi-lo) > MaxElements {
		return nil, p.errAt(at, "the repetition compiles to more than %d elements", MaxElements)
	}
	for range lo {
		seq = append(seq, x)
	}
	switch {
	case hi < 0: // r ::= x r | ε
		id := p.newRule(at)
		a := int32(len(p.g.elems))
		for _, e := range []elem{x, {kind: eRef, a: id}, {kind: eEnd}, {kind: eEnd}} {
			if err := p.emit(e); err != nil {
				return nil, err
			}
		}
		p.g.rules[id].alts = []int32{a, a + 3}
		seq = append(seq, elem{kind: eRef, a: id})
	case hi > lo: // o1 ::= x | ε; ok ::= x o(k-1) | ε
		prev := int32(-1)
		for range hi - lo {
			id := p.newRule(at)
			a := int32(len(p.g.elems))
			if err := p.emit(x); err != nil {
				return nil, err
			}
			if prev >= 0 {
				if err := p.emit(elem{kind: eRef, a: prev}); err != nil {
					return nil, err
				}
			}
			if err := p.emit(elem{kind: eEnd}); err != nil {
				return nil, err
			}
			if err := p.emit(elem{kind: eEnd}); err != nil {
				return nil, err
			}
			p.g.rules[id].alts = []int32{a, int32(len(p.g.elems)) - 1}
			prev = id
		}
		seq = append(seq, elem{kind: eRef, a: prev})
	}
	return seq, nil
}

// char reads one character of a literal or class, with its escapes.
func (p *gbnfParser) char() (rune, error) {
	at := p.pos
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += n
		return r, nil
	}
	if p.pos+1 >= len(p.src) {
		return 0, p.errAt(at, "escape at the end of the grammar")
	}
	e := p.src[p.pos+1]
	p.pos += 2
	hex := 0
	switch e {
	case 'x':
		hex = 2
	case 'u':
		hex = 4
	case 'U':
		hex = 8
	case 't':
		return '\t', nil
	case 'r':
		return '\r', nil
	case 'n':
		return '\n', nil
	case '\\', '"', '[', ']':
		return rune(e), nil
	default:
		p.pos = at
		return 0, p.errAt(at, "unknown escape \\%c", e)
	}
	if p.pos+hex > len(p.src) {
		return 0, p.errAt(at, "\\%c needs %d hex digits", e, hex)
	}
	v, err := strconv.ParseUint(p.src[p.pos:p.pos+hex], 16, 32)
	if err != nil {
		return 0, p.errAt(at, "\\%c needs %d hex digits, found %q", e, hex, p.src[p.pos:p.pos+hex])
	}
	p.pos += hex
	if v > utf8.MaxRune || 0xD800 <= v && v <= 0xDFFF {
		return 0, p.errAt(at, "\\%c%s is not a Unicode scalar value", e, p.src[p.pos-hex:p.pos])
	}
	return rune(v), nil
}

// class makes a character element of ranges (the complement if neg), sorted and merged.
func (p *gbnfParser) class(rs []crange, neg bool) elem {
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b crange) int { return int(a.lo - b.lo) })
	var m []crange
	for _, r := range rs {
		if n := len(m); n > 0 && r.lo <= m[n-1].hi+1 {
			m[n-1].hi = max(m[n-1].hi, r.hi)
		} else {
			m = append(m, r)
		}
	}
	if neg {
		var c []crange
		next := rune(0)
		for _, r := range m {
			if r.lo > next {
				c = append(c, crange{next, r.lo - 1})
			}
			next = r.hi + 1
		}
		if next <= utf8.MaxRune {
			c = append(c, crange{next, utf8.MaxRune})
		}
		m = c
	}
	a := int32(len(p.g.ranges))
	p.g.ranges = append(p.g.ranges, m...)
	return elem{kind: eChar, a: a, b: int32(len(p.g.ranges))}
}

// check refuses grammars the matcher cannot run: rules that can never end and left recursion.
func (g *GBNF) check() error {
	// Productive rules (can derive a finite string) and nullable rules (can derive the empty string),
	// as shortest derivations: characters are free (an empty class cannot match), or cannot be used.
	free, none := make([]int32, len(g.elems)), make([]int32, len(g.elems))
	for i, e := range g.elems {
		if e.kind == eChar {
			none[i] = costInf
			if e.a == e.b {
				free[i] = costInf
			}
		}
	}
	lengths, empties := shortest(g, free), shortest(g, none)
	prod := make([]bool, len(g.rules))
	null := make([]bool, len(g.rules))
	for id := range g.rules {
		prod[id], null[id] = lengths[id] < costInf, empties[id] == 0
	}
	for id, r := range g.rules {
		if !prod[id] {
			return fmt.Errorf("%w: line %d column %d: rule %s can never end (every alternative needs itself or a rule that cannot end, or a class that matches nothing)", ErrGrammar, r.line, r.col, g.displayName(int32(id)))
		}
	}
	// Left recursion: an edge a -> b when b can start a's alternative (everything before it is nullable).
	state := make([]uint8, len(g.rules)) // 0 new, 1 on the path, 2 done
	var path []int32
	var visit func(id int32) error
	visit = func(id int32) error {
		state[id] = 1
		path = append(path, id)
		for _, a := range g.rules[id].alts {
			for i := a; g.elems[i].kind == eRef; i++ {
				b := g.elems[i].a
				switch state[b] {
				case 1:
					k := slices.Index(path, b)
					var names []string
					for _, x := range path[k:] {
						names = append(names, g.displayName(x))
					}
					names = append(names, g.displayName(b))
					r := g.rules[b]
					return fmt.Errorf("%w: line %d column %d: left recursion is not supported: %s (a rule reaches itself without matching a character)", ErrGrammar, r.line, r.col, strings.Join(names, " -> "))
				case 0:
					if err := visit(b); err != nil {
						return err
					}
				}
				if !null[b] {
					break
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = 2
		return nil
	}
	for id := range g.rules {
		if state[id] == 0 {
			if err := visit(int32(id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// displayName names a rule for messages; a generated one as "a group in rule x".
func (g *GBNF) displayName(id int32) string {
	r := g.rules[id]
	if !r.generated {
		return r.name
	}
	base := r.name[:strings.LastIndexByte(r.name, '~')]
	return fmt.Sprintf("%s (a group or repetition in %s at line %d column %d)", r.name, base, r.line, r.col)
}

// Recognise reports whether s is a sentence of the grammar. It is the matcher's readable reference, a
// different algorithm over the same rules: for each rule and start position it computes the set of ends
// the rule can reach (memoised, so polynomial in len(s); compilation refused left recursion). It is meant
// for tests and checks, not for generation.
func (g *GBNF) Recognise(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	r := &recogniser{g: g, s: []rune(s), memo: map[[2]int][]int{}}
	return slices.Contains(r.ends(g.root, 0), len(r.s))
}

type recogniser struct {
	g    *GBNF
	s    []rune
	memo map[[2]int][]int
}

// ends returns the sorted ends j such that rule derives s[i:j].
func (r *recogniser) ends(rule int32, i int) []int {
	key := [2]int{int(rule), i}
	if e, ok := r.memo[key]; ok {
		return e
	}
	var out []int
	for _, a := range r.g.rules[rule].alts {
		out = append(out, r.seqEnds(a, i)...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	r.memo[key] = out
	return out
}

// seqEnds returns the sorted ends of the alternative starting at element pos, matched from i.
func (r *recogniser) seqEnds(pos int32, i int) []int {
	cur := []int{i}
	for ; r.g.elems[pos].kind != eEnd; pos++ {
		e := r.g.elems[pos]
		var next []int
		for _, j := range cur {
			switch e.kind {
			case eChar:
				if j < len(r.s) && inRanges(r.g.ranges[e.a:e.b], r.s[j]) {
					next = append(next, j+1)
				}
			case eRef:
				next = append(next, r.ends(e.a, j)...)
			}
		}
		slices.Sort(next)
		cur = slices.Compact(next)
		if len(cur) == 0 {
			return nil
		}
	}
	return cur
}

func inRanges(rs []crange, c rune) bool {
	for _, r := range rs {
		if r.lo <= c && c <= r.hi {
			return true
		}
	}
	return false
}
