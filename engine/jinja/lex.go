package jinja

import (
	"fmt"
	"strconv"
	"strings"
)

// The template source is cut into text and tags first ({{ }}, {% %}, {# #}),
// with Jinja's whitespace control applied the way Hugging Face renders chat
// templates (trim_blocks=True, lstrip_blocks=True):
//   - "{%-" / "{{-" / "{#-" strip all whitespace before the tag, "-%}" etc.
//     all whitespace after it;
//   - trim_blocks: the first newline after a block or comment tag is dropped;
//   - lstrip_blocks: spaces and tabs between the start of a line and a block
//     or comment tag are dropped ("{%+" turns that off).

type segKind uint8

const (
	segText segKind = iota
	segExpr         // {{ ... }}
	segStmt         // {% ... %}
)

type segment struct {
	kind segKind
	text string // literal text, or the tag's inside
	pos  int    // byte offset in the source, for errors
}

// maxTemplate bounds the size of a template source.
const maxTemplate = 1 << 20

type tag struct {
	kind           byte // '{', '%', '#'; 'r'/'R' for raw/endraw
	inner          string
	start, end     int // [start,end) of the whole tag in src
	stripL, stripR bool
	noLstrip       bool
	innerStart     int
}

func splitTemplate(src string) ([]segment, error) {
	if len(src) > maxTemplate {
		return nil, fmt.Errorf("%w: template is %d bytes (max %d)", ErrTemplate, len(src), maxTemplate)
	}
	var tags []tag
	for i := 0; i < len(src); {
		j := strings.IndexByte(src[i:], '{')
		if j < 0 {
			break
		}
		j += i
		if j+1 >= len(src) {
			break
		}
		var closer string
		switch src[j+1] {
		case '{':
			closer = "}}"
		case '%':
			closer = "%}"
		case '#':
			closer = "#}"
		default:
			i = j + 1
			continue
		}
		t := tag{kind: src[j+1], start: j}
		k := j + 2
		if k < len(src) && src[k] == '-' {
			t.stripL = true
			k++
		} else if k < len(src) && src[k] == '+' {
			t.noLstrip = true
			k++
		}
		e := -1
		if t.kind == '#' {
			if x := strings.Index(src[k:], closer); x >= 0 {
				e = k + x
			}
		} else {
			e = findClose(src, k, closer)
		}
		if e < 0 {
			return nil, fmt.Errorf("%w: unclosed %q at offset %d", ErrTemplate, src[j:j+2], j)
		}
		t.end = e + 2
		inner := src[k:e]
		if strings.HasSuffix(inner, "-") {
			t.stripR = true
			inner = inner[:len(inner)-1]
		} else if strings.HasSuffix(inner, "+") && t.kind != '{' {
			inner = inner[:len(inner)-1]
		}
		t.inner = inner
		t.innerStart = k
		if t.kind == '%' {
			// {% raw %}...{% endraw %}: everything in between is text.
			if strings.TrimSpace(inner) == "raw" {
				r := strings.Index(src[t.end:], "endraw")
				if r < 0 {
					return nil, fmt.Errorf("%w: {%% raw %%} without endraw", ErrTemplate)
				}
				tags = append(tags, tag{kind: 'r', start: t.start, end: t.end, stripL: t.stripL, stripR: t.stripR, noLstrip: t.noLstrip})
				// find the tag start of endraw
				endStart := strings.LastIndex(src[:t.end+r], "{%")
				if endStart < t.end {
					return nil, fmt.Errorf("%w: malformed endraw", ErrTemplate)
				}
				closeAt := strings.Index(src[t.end+r:], "%}")
				if closeAt < 0 {
					return nil, fmt.Errorf("%w: unclosed endraw", ErrTemplate)
				}
				et := tag{kind: 'R', start: endStart, end: t.end + r + closeAt + 2, innerStart: t.end}
				et.stripL = endStart+2 < len(src) && src[endStart+2] == '-'
				et.stripR = src[t.end+r+closeAt-1] == '-'
				tags = append(tags, et)
				i = et.end
				continue
			}
		}
		tags = append(tags, t)
		i = t.end
	}

	var segs []segment
	prevEnd := 0
	var prev *tag
	for ti := range tags {
		t := &tags[ti]
		text := src[prevEnd:t.start]
		block := t.kind == '%' || t.kind == '#' || t.kind == 'r' || t.kind == 'R'
		if t.stripL {
			text = strings.TrimRight(text, " \t\r\n\f\v")
		} else if block && !t.noLstrip {
			text = lstripLine(text, prev == nil)
		}
		text = trimAfter(text, prev)
		if text != "" {
			segs = append(segs, segment{kind: segText, text: text, pos: prevEnd})
		}
		switch t.kind {
		case '{':
			segs = append(segs, segment{kind: segExpr, text: t.inner, pos: t.innerStart})
		case '%':
			segs = append(segs, segment{kind: segStmt, text: t.inner, pos: t.innerStart})
		}
		prevEnd = t.end
		prev = t
	}
	if tail := trimAfter(src[prevEnd:], prev); tail != "" {
		segs = append(segs, segment{kind: segText, text: tail, pos: prevEnd})
	}
	return segs, nil
}

// trimAfter applies the whitespace control of the tag before a text.
func trimAfter(text string, prev *tag) string {
	if prev == nil {
		return text
	}
	if prev.stripR {
		return strings.TrimLeft(text, " \t\r\n\f\v")
	}
	if prev.kind != '{' { // trim_blocks
		if strings.HasPrefix(text, "\r\n") {
			return text[2:]
		}
		if strings.HasPrefix(text, "\n") {
			return text[1:]
		}
	}
	return text
}

// findClose finds closer outside string literals, from k.
func findClose(src string, k int, closer string) int {
	var quote byte
	for i := k; i+1 < len(src); i++ {
		c := src[i]
		if quote != 0 {
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		if c == '\'' || c == '"' {
			quote = c
			continue
		}
		if c == closer[0] && src[i+1] == closer[1] {
			return i
		}
	}
	return -1
}

// lstripLine removes spaces and tabs at the end of text if they are all that
// stands between the start of a line and the tag that follows.
func lstripLine(text string, lineStartAtBegin bool) string {
	i := len(text)
	for i > 0 && (text[i-1] == ' ' || text[i-1] == '\t') {
		i--
	}
	if i == 0 && lineStartAtBegin || i > 0 && text[i-1] == '\n' {
		return text[:i]
	}
	return text
}

// ---- tokens inside tags ----

type tokKind uint8

const (
	tkEOF tokKind = iota
	tkName
	tkString
	tkInt
	tkFloat
	tkOp
)

type token struct {
	kind tokKind
	s    string // name, operator, or decoded string literal
	i    int64
	f    float64
	pos  int
}

var ops3 = []string{"//", "**", "==", "!=", "<=", ">="}

func lexTag(s string, base int) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			toks = append(toks, token{kind: tkName, s: s[i:j], pos: base + i})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '_') {
				j++
			}
			isFloat := false
			if j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
				isFloat = true
				j++
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
			}
			if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
				k := j + 1
				if k < len(s) && (s[k] == '+' || s[k] == '-') {
					k++
				}
				if k < len(s) && s[k] >= '0' && s[k] <= '9' {
					isFloat = true
					for j = k; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
					}
				}
			}
			lit := strings.ReplaceAll(s[i:j], "_", "")
			if isFloat {
				f, err := strconv.ParseFloat(lit, 64)
				if err != nil {
					return nil, fmt.Errorf("%w: bad number %q", ErrTemplate, lit)
				}
				toks = append(toks, token{kind: tkFloat, f: f, pos: base + i})
			} else {
				n, err := strconv.ParseInt(lit, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%w: bad number %q", ErrTemplate, lit)
				}
				toks = append(toks, token{kind: tkInt, i: n, pos: base + i})
			}
			i = j
		case c == '\'' || c == '"':
			str, n, err := unquote(s[i:])
			if err != nil {
				return nil, fmt.Errorf("%w at offset %d", err, base+i)
			}
			toks = append(toks, token{kind: tkString, s: str, pos: base + i})
			i += n
		default:
			op := ""
			for _, o := range ops3 {
				if strings.HasPrefix(s[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("()[]{}.,:|~+-*/%<>=!", rune(c)) {
					return nil, fmt.Errorf("%w: unexpected character %q at offset %d", ErrTemplate, c, base+i)
				}
				op = s[i : i+1]
			}
			toks = append(toks, token{kind: tkOp, s: op, pos: base + i})
			i += len(op)
		}
	}
	toks = append(toks, token{kind: tkEOF, pos: base + len(s)})
	return toks, nil
}

// unquote decodes a Python string literal at the start of s and returns it and
// its length in s.
func unquote(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), i + 1, nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			break
		}
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case '\\', '\'', '"':
			b.WriteByte(e)
		case '\n':
		case 'u', 'x':
			n := 4
			if e == 'x' {
				n = 2
			}
			if i+n >= len(s) {
				return "", 0, fmt.Errorf("%w: bad escape", ErrTemplate)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", 0, fmt.Errorf("%w: bad escape \\%c%s", ErrTemplate, e, s[i+1:i+1+n])
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, fmt.Errorf("%w: unterminated string", ErrTemplate)
}
