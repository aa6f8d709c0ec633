package jinja

import (
	"fmt"
	"strconv"
)

// ---- AST ----

type node interface{}

type (
	textNode   struct{ s string }
	outputNode struct{ e expr }
	ifNode     struct {
		conds  []expr
		bodies [][]node
		els    []node
	}
	forNode struct {
		vars       []string
		iter, cond expr
		body, els  []node
	}
	setNode struct {
		names []string // one name, or several for tuple unpacking
		attr  string   // set ns.attr = ...
		e     expr
		body  []node // {% set x %}...{% endset %}
	}
	macroNode struct {
		name     string
		params   []string
		defaults []expr // per param, nil = required
		body     []node
	}
	breakNode    struct{}
	continueNode struct{}
)

type expr interface{}

type (
	literal struct{ v value }
	nameRef struct{ name string }
	getAttr struct {
		obj  expr
		name string
	}
	getItem struct{ obj, idx expr }
	sliceOp struct{ obj, lo, hi, step expr }
	callOp  struct {
		fn   expr
		args []expr
		kw   []kwArg
	}
	filterOp struct {
		e    expr
		name string
		args []expr
		kw   []kwArg
	}
	testOp struct {
		e    expr
		name string
		args []expr
		neg  bool
	}
	unaryOp struct {
		op string
		e  expr
	}
	binaryOp struct {
		op   string
		l, r expr
	}
	condOp  struct{ then, cond, els expr }
	listLit struct{ items []expr }
	dictLit struct{ keys, vals []expr }
)

type kwArg struct {
	name string
	e    expr
}

// ---- parser ----

const maxDepth = 200

type parser struct {
	segs  []segment
	si    int
	toks  []token
	ti    int
	depth int
}

func parseTemplate(src string) ([]node, error) {
	segs, err := splitTemplate(src)
	if err != nil {
		return nil, err
	}
	p := &parser{segs: segs}
	body, end, err := p.parseBody()
	if err != nil {
		return nil, err
	}
	if end != "" {
		return nil, fmt.Errorf("%w: unexpected {%% %s %%}", ErrTemplate, end)
	}
	return body, nil
}

// parseBody parses nodes until an end/else-like statement, which it returns
// (with p.toks positioned after its keyword) or "" at the end of input.
func (p *parser) parseBody() ([]node, string, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, "", fmt.Errorf("%w: blocks nested too deeply", ErrTemplate)
	}
	var out []node
	for p.si < len(p.segs) {
		sg := p.segs[p.si]
		p.si++
		switch sg.kind {
		case segText:
			out = append(out, &textNode{sg.text})
		case segExpr:
			if err := p.startTag(sg); err != nil {
				return nil, "", err
			}
			e, err := p.parseExpr()
			if err != nil {
				return nil, "", err
			}
			if err := p.endTag(); err != nil {
				return nil, "", err
			}
			out = append(out, &outputNode{e})
		case segStmt:
			if err := p.startTag(sg); err != nil {
				return nil, "", err
			}
			kw := p.next()
			if kw.kind != tkName {
				return nil, "", p.errf(kw, "expected a statement")
			}
			switch kw.s {
			case "elif", "else", "endif", "endfor", "endset", "endmacro", "endgeneration":
				return out, kw.s, nil
			case "if":
				n, err := p.parseIf()
				if err != nil {
					return nil, "", err
				}
				out = append(out, n)
			case "for":
				n, err := p.parseFor()
				if err != nil {
					return nil, "", err
				}
				out = append(out, n)
			case "set":
				n, err := p.parseSet()
				if err != nil {
					return nil, "", err
				}
				out = append(out, n)
			case "macro":
				n, err := p.parseMacro()
				if err != nil {
					return nil, "", err
				}
				out = append(out, n)
			case "break", "continue":
				if err := p.endTag(); err != nil {
					return nil, "", err
				}
				if kw.s == "break" {
					out = append(out, breakNode{})
				} else {
					out = append(out, continueNode{})
				}
			case "generation": // Hugging Face's assistant-mask marker: renders its body
				if err := p.endTag(); err != nil {
					return nil, "", err
				}
				body, end, err := p.parseBody()
				if err != nil {
					return nil, "", err
				}
				if end != "endgeneration" {
					return nil, "", fmt.Errorf("%w: {%% generation %%} without endgeneration", ErrTemplate)
				}
				if err := p.endTag(); err != nil {
					return nil, "", err
				}
				out = append(out, body...)
			default:
				return nil, "", p.errf(kw, "unsupported statement %q", kw.s)
			}
		}
	}
	return out, "", nil
}

func (p *parser) startTag(sg segment) error {
	toks, err := lexTag(sg.text, sg.pos)
	if err != nil {
		return err
	}
	p.toks, p.ti = toks, 0
	return nil
}

func (p *parser) endTag() error {
	if t := p.peek(); t.kind != tkEOF {
		return p.errf(t, "unexpected %q", t.text())
	}
	return nil
}

func (t token) text() string {
	switch t.kind {
	case tkString:
		return strconv.Quote(t.s)
	case tkInt:
		return strconv.FormatInt(t.i, 10)
	case tkFloat:
		return strconv.FormatFloat(t.f, 'g', -1, 64)
	case tkEOF:
		return "end of tag"
	}
	return t.s
}

func (p *parser) errf(t token, format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrTemplate, t.pos, fmt.Sprintf(format, args...))
}

func (p *parser) peek() token { return p.toks[p.ti] }

func (p *parser) next() token {
	t := p.toks[p.ti]
	if t.kind != tkEOF {
		p.ti++
	}
	return t
}

func (p *parser) isOp(s string) bool   { t := p.peek(); return t.kind == tkOp && t.s == s }
func (p *parser) isName(s string) bool { t := p.peek(); return t.kind == tkName && t.s == s }

func (p *parser) accept(s string) bool {
	if p.isOp(s) || p.isName(s) {
		p.ti++
		return true
	}
	return false
}

func (p *parser) expect(s string) error {
	if !p.accept(s) {
		return p.errf(p.peek(), "expected %q, found %q", s, p.peek().text())
	}
	return nil
}

func (p *parser) ident() (string, error) {
	t := p.next()
	if t.kind != tkName {
		return "", p.errf(t, "expected a name, found %q", t.text())
	}
	return t.s, nil
}

func (p *parser) parseIf() (node, error) {
	n := &ifNode{}
	for {
		c, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if err := p.endTag(); err != nil {
			return nil, err
		}
		body, end, err := p.parseBody()
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, c)
		n.bodies = append(n.bodies, body)
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.endTag(); err != nil {
				return nil, err
			}
			els, end2, err := p.parseBody()
			if err != nil {
				return nil, err
			}
			if end2 != "endif" {
				return nil, fmt.Errorf("%w: {%% else %%} of an if closed by %q", ErrTemplate, end2)
			}
			n.els = els
			return n, p.endTag()
		case "endif":
			return n, p.endTag()
		default:
			return nil, fmt.Errorf("%w: {%% if %%} closed by %q", ErrTemplate, end)
		}
	}
}

func (p *parser) parseFor() (node, error) {
	n := &forNode{}
	for {
		v, err := p.ident()
		if err != nil {
			return nil, err
		}
		n.vars = append(n.vars, v)
		if !p.accept(",") {
			break
		}
	}
	if err := p.expect("in"); err != nil {
		return nil, err
	}
	it, err := p.parseOr() // no conditional expression: "if" filters the loop
	if err != nil {
		return nil, err
	}
	n.iter = it
	if p.accept("if") {
		if n.cond, err = p.parseOr(); err != nil {
			return nil, err
		}
	}
	if p.accept("recursive") {
		return nil, p.errf(p.peek(), "recursive loops are not supported")
	}
	if err := p.endTag(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody()
	if err != nil {
		return nil, err
	}
	n.body = body
	if end == "else" {
		if err := p.endTag(); err != nil {
			return nil, err
		}
		if n.els, end, err = p.parseBody(); err != nil {
			return nil, err
		}
	}
	if end != "endfor" {
		return nil, fmt.Errorf("%w: {%% for %%} closed by %q", ErrTemplate, end)
	}
	return n, p.endTag()
}

func (p *parser) parseSet() (node, error) {
	n := &setNode{}
	name, err := p.ident()
	if err != nil {
		return nil, err
	}
	n.names = []string{name}
	if p.accept(".") {
		if n.attr, err = p.ident(); err != nil {
			return nil, err
		}
	} else {
		for p.accept(",") {
			v, err := p.ident()
			if err != nil {
				return nil, err
			}
			n.names = append(n.names, v)
		}
	}
	if p.accept("=") {
		if n.e, err = p.parseTuple(); err != nil {
			return nil, err
		}
		return n, p.endTag()
	}
	if len(n.names) != 1 || n.attr != "" {
		return nil, p.errf(p.peek(), "expected '='")
	}
	if err := p.endTag(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody()
	if err != nil {
		return nil, err
	}
	if end != "endset" {
		return nil, fmt.Errorf("%w: {%% set %%} block closed by %q", ErrTemplate, end)
	}
	n.body = body
	return n, p.endTag()
}

func (p *parser) parseMacro() (node, error) {
	n := &macroNode{}
	var err error
	if n.name, err = p.ident(); err != nil {
		return nil, err
	}
	if err := p.expect("("); err != nil {
		return nil, err
	}
	for !p.accept(")") {
		if len(n.params) > 0 {
			if err := p.expect(","); err != nil {
				return nil, err
			}
		}
		name, err := p.ident()
		if err != nil {
			return nil, err
		}
		var def expr
		if p.accept("=") {
			if def, err = p.parseExpr(); err != nil {
				return nil, err
			}
		}
		n.params = append(n.params, name)
		n.defaults = append(n.defaults, def)
	}
	if err := p.endTag(); err != nil {
		return nil, err
	}
	body, end, err := p.parseBody()
	if err != nil {
		return nil, err
	}
	if end != "endmacro" {
		return nil, fmt.Errorf("%w: {%% macro %%} closed by %q", ErrTemplate, end)
	}
	n.body = body
	return n, p.endTag()
}

// parseTuple: expr or "a, b, ..." (a list).
func (p *parser) parseTuple() (expr, error) {
	e, err := p.parseExpr()
	if err != nil {
		return nil, err
	}
	if !p.isOp(",") {
		return e, nil
	}
	items := []expr{e}
	for p.accept(",") {
		if t := p.peek(); t.kind == tkEOF {
			break
		}
		x, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		items = append(items, x)
	}
	return &listLit{items}, nil
}

// Expression grammar (Jinja's precedence, lowest first):
// cond-expr: or ["if" or ["else" cond-expr]]; or; and; not; comparison
// (== != < > <= >= in, not in); + -; ~; * / // %; **; unary - +;
// postfix (.attr [idx] (call)) followed by filters (|f) and tests (is t).
func (p *parser) parseExpr() (expr, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return nil, p.errf(p.peek(), "expression nested too deeply")
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.accept("if") {
		c, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var els expr
		if p.accept("else") {
			if els, err = p.parseOr(); err != nil {
				return nil, err
			}
		}
		e = &condOp{then: e, cond: c, els: els}
	}
	return e, nil
}

func (p *parser) parseOr() (expr, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.accept("or") {
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: "or", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (expr, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.accept("and") {
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: "and", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseNot() (expr, error) {
	if p.accept("not") {
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil, p.errf(p.peek(), "expression nested too deeply")
		}
		e, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryOp{op: "not", e: e}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	l, err := p.parseAdd()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		var op string
		switch {
		case t.kind == tkOp && (t.s == "==" || t.s == "!=" || t.s == "<" || t.s == ">" || t.s == "<=" || t.s == ">="):
			op = t.s
			p.ti++
		case t.kind == tkName && t.s == "in":
			op = "in"
			p.ti++
		case t.kind == tkName && t.s == "not" && p.toks[p.ti+1].kind == tkName && p.toks[p.ti+1].s == "in":
			op = "not in"
			p.ti += 2
		default:
			return l, nil
		}
		r, err := p.parseAdd()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: op, l: l, r: r}
	}
}

func (p *parser) parseAdd() (expr, error) {
	l, err := p.parseConcat()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().s
		r, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: op, l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseConcat() (expr, error) {
	l, err := p.parseMul()
	if err != nil {
		return nil, err
	}
	for p.accept("~") {
		r, err := p.parseMul()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: "~", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseMul() (expr, error) {
	l, err := p.parsePow()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		op := p.next().s
		r, err := p.parsePow()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: op, l: l, r: r}
	}
	return l, nil
}

func (p *parser) parsePow() (expr, error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for p.accept("**") {
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = &binaryOp{op: "**", l: l, r: r}
	}
	return l, nil
}

func (p *parser) parseUnary() (expr, error) {
	if p.isOp("-") || p.isOp("+") {
		op := p.next().s
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return nil, p.errf(p.peek(), "expression nested too deeply")
		}
		e, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return p.parseFilters(&unaryOp{op: op, e: e})
	}
	e, err := p.parsePrimary()
	if err != nil {
		return nil, err
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	return p.parseFilters(e)
}

func (p *parser) parseFilters(e expr) (expr, error) {
	for {
		switch {
		case p.accept("|"):
			name, err := p.ident()
			if err != nil {
				return nil, err
			}
			f := &filterOp{e: e, name: name}
			if p.accept("(") {
				if f.args, f.kw, err = p.parseArgs(); err != nil {
					return nil, err
				}
			}
			e = f
		case p.accept("is"):
			t := &testOp{e: e}
			if p.accept("not") {
				t.neg = true
			}
			tk := p.next()
			switch {
			case tk.kind == tkName:
				t.name = tk.s
			case tk.kind == tkOp && (tk.s == "==" || tk.s == "!=" || tk.s == "<" || tk.s == ">" || tk.s == "<=" || tk.s == ">="):
				t.name = tk.s
			default:
				return nil, p.errf(tk, "expected a test name after 'is'")
			}
			if p.accept("(") {
				args, kw, err := p.parseArgs()
				if err != nil {
					return nil, err
				}
				if len(kw) > 0 {
					return nil, p.errf(p.peek(), "keyword arguments to tests are not supported")
				}
				t.args = args
			} else if nt := p.peek(); nt.kind == tkString || nt.kind == tkInt || nt.kind == tkFloat ||
				nt.kind == tkName && !isKeyword(nt.s) {
				// "is divisibleby 3", "is equalto 'x'": one argument without parentheses
				a, err := p.parsePrimary()
				if err != nil {
					return nil, err
				}
				if a, err = p.parsePostfix(a); err != nil {
					return nil, err
				}
				t.args = []expr{a}
			}
			e = t
		default:
			return e, nil
		}
	}
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "in", "is", "if", "else", "recursive":
		return true
	}
	return false
}

func (p *parser) parseArgs() ([]expr, []kwArg, error) {
	var args []expr
	var kw []kwArg
	for !p.accept(")") {
		if len(args)+len(kw) > 0 {
			if err := p.expect(","); err != nil {
				return nil, nil, err
			}
			if p.accept(")") {
				break
			}
		}
		if t := p.peek(); t.kind == tkName && p.toks[p.ti+1].kind == tkOp && p.toks[p.ti+1].s == "=" {
			p.ti += 2
			e, err := p.parseExpr()
			if err != nil {
				return nil, nil, err
			}
			kw = append(kw, kwArg{t.s, e})
			continue
		}
		if len(kw) > 0 {
			return nil, nil, p.errf(p.peek(), "positional argument after keyword argument")
		}
		e, err := p.parseExpr()
		if err != nil {
			return nil, nil, err
		}
		args = append(args, e)
	}
	return args, kw, nil
}

func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		switch {
		case p.accept("."):
			t := p.next()
			switch t.kind {
			case tkName:
				e = &getAttr{obj: e, name: t.s}
			case tkInt:
				e = &getItem{obj: e, idx: &literal{t.i}}
			default:
				return nil, p.errf(t, "expected an attribute name")
			}
		case p.accept("["):
			var lo, hi, step expr
			var err error
			if !p.isOp(":") {
				if lo, err = p.parseExpr(); err != nil {
					return nil, err
				}
				if p.accept("]") {
					e = &getItem{obj: e, idx: lo}
					continue
				}
			}
			if err := p.expect(":"); err != nil {
				return nil, err
			}
			if !p.isOp(":") && !p.isOp("]") {
				if hi, err = p.parseExpr(); err != nil {
					return nil, err
				}
			}
			if p.accept(":") && !p.isOp("]") {
				if step, err = p.parseExpr(); err != nil {
					return nil, err
				}
			}
			if err := p.expect("]"); err != nil {
				return nil, err
			}
			e = &sliceOp{obj: e, lo: lo, hi: hi, step: step}
		case p.accept("("):
			args, kw, err := p.parseArgs()
			if err != nil {
				return nil, err
			}
			e = &callOp{fn: e, args: args, kw: kw}
		default:
			return e, nil
		}
	}
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tkString:
		s := t.s
		for p.peek().kind == tkString { // adjacent literals concatenate
			s += p.next().s
		}
		return &literal{s}, nil
	case tkInt:
		return &literal{t.i}, nil
	case tkFloat:
		return &literal{t.f}, nil
	case tkName:
		switch t.s {
		case "true", "True":
			return &literal{true}, nil
		case "false", "False":
			return &literal{false}, nil
		case "none", "None":
			return &literal{nil}, nil
		}
		if isKeyword(t.s) {
			return nil, p.errf(t, "unexpected %q", t.s)
		}
		return &nameRef{t.s}, nil
	case tkOp:
		switch t.s {
		case "(":
			p.depth++
			defer func() { p.depth-- }()
			if p.accept(")") {
				return &listLit{}, nil
			}
			e, err := p.parseTuple()
			if err != nil {
				return nil, err
			}
			return e, p.expect(")")
		case "[":
			l := &listLit{}
			for !p.accept("]") {
				if len(l.items) > 0 {
					if err := p.expect(","); err != nil {
						return nil, err
					}
					if p.accept("]") {
						break
					}
				}
				e, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				l.items = append(l.items, e)
			}
			return l, nil
		case "{":
			d := &dictLit{}
			for !p.accept("}") {
				if len(d.keys) > 0 {
					if err := p.expect(","); err != nil {
						return nil, err
					}
					if p.accept("}") {
						break
					}
				}
				k, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				if err := p.expect(":"); err != nil {
					return nil, err
				}
				v, err := p.parseExpr()
				if err != nil {
					return nil, err
				}
				d.keys = append(d.keys, k)
				d.vals = append(d.vals, v)
			}
			return d, nil
		}
	}
	return nil, p.errf(t, "unexpected %q", t.text())
}
