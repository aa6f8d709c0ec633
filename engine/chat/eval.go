package chat

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits that keep a hostile template from hanging or exhausting memory.
const (
	maxOutput = 8 << 20 // bytes of rendered text (and of any string value)
	maxSteps  = 1 << 18 // loop iterations and macro calls, in total
	maxCalls  = 64      // nested macro calls
)

type macro struct {
	*macroNode
}

type scope struct {
	vars   map[string]value
	parent *scope
}

func (s *scope) lookup(name string) (value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

type state struct {
	sc    *scope
	steps int
	calls int
}

// control flow signals
var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

func (st *state) step() error {
	st.steps++
	if st.steps > maxSteps {
		return fmt.Errorf("%w: template runs too long", ErrRender)
	}
	return nil
}

func (st *state) render(nodes []node, out *strings.Builder) error {
	for _, n := range nodes {
		if out.Len() > maxOutput {
			return fmt.Errorf("%w: output exceeds %d bytes", ErrRender, maxOutput)
		}
		switch n := n.(type) {
		case *textNode:
			out.WriteString(n.s)
		case *outputNode:
			v, err := st.eval(n.e)
			if err != nil {
				return err
			}
			out.WriteString(str(v))
		case *ifNode:
			done := false
			for i, c := range n.conds {
				v, err := st.eval(c)
				if err != nil {
					return err
				}
				if truth(v) {
					if err := st.render(n.bodies[i], out); err != nil {
						return err
					}
					done = true
					break
				}
			}
			if !done && n.els != nil {
				if err := st.render(n.els, out); err != nil {
					return err
				}
			}
		case *forNode:
			if err := st.renderFor(n, out); err != nil {
				return err
			}
		case *setNode:
			var v value
			if n.body != nil {
				var b strings.Builder
				if err := st.render(n.body, &b); err != nil {
					return err
				}
				v = b.String()
			} else {
				var err error
				if v, err = st.eval(n.e); err != nil {
					return err
				}
			}
			if n.attr != "" {
				obj, _ := st.sc.lookup(n.names[0])
				d, ok := obj.(*dict)
				if !ok || !d.ns {
					return fmt.Errorf("%w: cannot set attribute %q of %s %q (only namespace() objects)", ErrRender, n.attr, typeName(obj), n.names[0])
				}
				d.set(n.attr, v)
				continue
			}
			if len(n.names) == 1 {
				st.sc.vars[n.names[0]] = v
				continue
			}
			l, ok := v.([]value)
			if !ok || len(l) != len(n.names) {
				return fmt.Errorf("%w: cannot unpack %s into %d names", ErrRender, typeName(v), len(n.names))
			}
			for i, name := range n.names {
				st.sc.vars[name] = l[i]
			}
		case *macroNode:
			st.sc.vars[n.name] = &macro{n}
		case breakNode:
			return errBreak
		case continueNode:
			return errContinue
		}
	}
	return nil
}

func (st *state) renderFor(n *forNode, out *strings.Builder) error {
	it, err := st.eval(n.iter)
	if err != nil {
		return err
	}
	var items []value
	switch x := it.(type) {
	case []value:
		items = x
	case *dict:
		for _, k := range x.keys {
			items = append(items, k)
		}
	case string:
		for _, r := range x {
			items = append(items, string(r))
		}
	case undefinedT, nil:
	default:
		return fmt.Errorf("%w: cannot loop over %s", ErrRender, typeName(it))
	}
	outer := st.sc
	defer func() { st.sc = outer }()
	bind := func(sc *scope, item value) error {
		if len(n.vars) == 1 {
			sc.vars[n.vars[0]] = item
			return nil
		}
		l, ok := item.([]value)
		if !ok || len(l) != len(n.vars) {
			return fmt.Errorf("%w: cannot unpack %s into %d loop variables", ErrRender, typeName(item), len(n.vars))
		}
		for i, v := range n.vars {
			sc.vars[v] = l[i]
		}
		return nil
	}
	if n.cond != nil { // the loop filter runs before loop.* is known
		var kept []value
		for _, item := range items {
			if err := st.step(); err != nil {
				return err
			}
			st.sc = &scope{vars: map[string]value{}, parent: outer}
			if err := bind(st.sc, item); err != nil {
				return err
			}
			c, err := st.eval(n.cond)
			if err != nil {
				return err
			}
			if truth(c) {
				kept = append(kept, item)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		st.sc = outer
		return st.render(n.els, out)
	}
	for i, item := range items {
		if err := st.step(); err != nil {
			return err
		}
		st.sc = &scope{vars: map[string]value{}, parent: outer}
		if err := bind(st.sc, item); err != nil {
			return err
		}
		loop := newDict()
		loop.set("index", int64(i+1))
		loop.set("index0", int64(i))
		loop.set("revindex", int64(len(items)-i))
		loop.set("revindex0", int64(len(items)-i-1))
		loop.set("first", i == 0)
		loop.set("last", i == len(items)-1)
		loop.set("length", int64(len(items)))
		if i > 0 {
			loop.set("previtem", items[i-1])
		}
		if i+1 < len(items) {
			loop.set("nextitem", items[i+1])
		}
		st.sc.vars["loop"] = loop
		err := st.render(n.body, out)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
	}
	return nil
}

func (st *state) eval(e expr) (value, error) {
	switch e := e.(type) {
	case *literal:
		return e.v, nil
	case *nameRef:
		if v, ok := st.sc.lookup(e.name); ok {
			return v, nil
		}
		return undefined, nil
	case *getAttr:
		obj, err := st.eval(e.obj)
		if err != nil {
			return nil, err
		}
		if d, ok := obj.(*dict); ok {
			if v, ok := d.get(e.name); ok {
				return v, nil
			}
		}
		return undefined, nil
	case *getItem:
		obj, err := st.eval(e.obj)
		if err != nil {
			return nil, err
		}
		idx, err := st.eval(e.idx)
		if err != nil {
			return nil, err
		}
		return index(obj, idx), nil
	case *sliceOp:
		return st.evalSlice(e)
	case *listLit:
		l := make([]value, 0, len(e.items))
		for _, x := range e.items {
			v, err := st.eval(x)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case *dictLit:
		d := newDict()
		for i := range e.keys {
			k, err := st.eval(e.keys[i])
			if err != nil {
				return nil, err
			}
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("%w: dict keys must be strings, not %s", ErrRender, typeName(k))
			}
			v, err := st.eval(e.vals[i])
			if err != nil {
				return nil, err
			}
			d.set(ks, v)
		}
		return d, nil
	case *condOp:
		c, err := st.eval(e.cond)
		if err != nil {
			return nil, err
		}
		if truth(c) {
			return st.eval(e.then)
		}
		if e.els == nil {
			return undefined, nil
		}
		return st.eval(e.els)
	case *unaryOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "not":
			return !truth(v), nil
		case "-":
			switch x := v.(type) {
			case int64:
				return -x, nil
			case float64:
				return -x, nil
			}
			return nil, fmt.Errorf("%w: bad operand for unary -: %s", ErrRender, typeName(v))
		default: // +
			if _, ok := toFloat(v); !ok {
				return nil, fmt.Errorf("%w: bad operand for unary +: %s", ErrRender, typeName(v))
			}
			return v, nil
		}
	case *binaryOp:
		return st.evalBinary(e)
	case *testOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		args, err := st.evalList(e.args)
		if err != nil {
			return nil, err
		}
		r, err := runTest(e.name, v, args, st)
		if err != nil {
			return nil, err
		}
		return r != e.neg, nil
	case *filterOp:
		v, err := st.eval(e.e)
		if err != nil {
			return nil, err
		}
		args, err := st.evalList(e.args)
		if err != nil {
			return nil, err
		}
		kw, err := st.evalKw(e.kw)
		if err != nil {
			return nil, err
		}
		return st.filter(e.name, v, args, kw)
	case *callOp:
		return st.evalCall(e)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrRender, e)
}

func (st *state) evalList(es []expr) ([]value, error) {
	if len(es) == 0 {
		return nil, nil
	}
	out := make([]value, len(es))
	for i, x := range es {
		v, err := st.eval(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (st *state) evalKw(kw []kwArg) (map[string]value, error) {
	if len(kw) == 0 {
		return nil, nil
	}
	m := make(map[string]value, len(kw))
	for _, k := range kw {
		v, err := st.eval(k.e)
		if err != nil {
			return nil, err
		}
		m[k.name] = v
	}
	return m, nil
}

func index(obj, idx value) value {
	switch x := obj.(type) {
	case *dict:
		if k, ok := idx.(string); ok {
			if v, ok := x.get(k); ok {
				return v
			}
		}
	case []value:
		if i, ok := idx.(int64); ok {
			if i < 0 {
				i += int64(len(x))
			}
			if i >= 0 && i < int64(len(x)) {
				return x[i]
			}
		}
	case string:
		if i, ok := idx.(int64); ok {
			r := []rune(x)
			if i < 0 {
				i += int64(len(r))
			}
			if i >= 0 && i < int64(len(r)) {
				return string(r[i])
			}
		}
	}
	return undefined
}

func (st *state) evalSlice(e *sliceOp) (value, error) {
	obj, err := st.eval(e.obj)
	if err != nil {
		return nil, err
	}
	var n int
	var runes []rune
	switch x := obj.(type) {
	case []value:
		n = len(x)
	case string:
		runes = []rune(x)
		n = len(runes)
	default:
		return nil, fmt.Errorf("%w: cannot slice %s", ErrRender, typeName(obj))
	}
	bound := func(ex expr, def int64) (int64, error) {
		if ex == nil {
			return def, nil
		}
		v, err := st.eval(ex)
		if err != nil {
			return 0, err
		}
		if v == nil || isUndefined(v) {
			return def, nil
		}
		i, ok := v.(int64)
		if !ok {
			return 0, fmt.Errorf("%w: slice indices must be integers, not %s", ErrRender, typeName(v))
		}
		return i, nil
	}
	step, err := bound(e.step, 1)
	if err != nil {
		return nil, err
	}
	if step == 0 {
		return nil, fmt.Errorf("%w: slice step cannot be zero", ErrRender)
	}
	var lo, hi int64
	if step > 0 {
		lo, hi = 0, int64(n)
	} else {
		lo, hi = int64(n)-1, -1
	}
	clamp := func(i int64, forStart bool) int64 {
		if i < 0 {
			i += int64(n)
			if i < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		}
		if i >= int64(n) {
			if step < 0 {
				return int64(n) - 1
			}
			return int64(n)
		}
		return i
	}
	if e.lo != nil {
		v, err := bound(e.lo, lo)
		if err != nil {
			return nil, err
		}
		if v != lo {
			lo = clamp(v, true)
		}
	}
	if e.hi != nil {
		v, err := bound(e.hi, hi)
		if err != nil {
			return nil, err
		}
		if v != hi || step > 0 {
			hi = clamp(v, false)
		}
	}
	var idx []int64
	if step > 0 {
		for i := lo; i < hi; i += step {
			idx = append(idx, i)
		}
	} else {
		for i := lo; i > hi; i += step {
			idx = append(idx, i)
		}
	}
	if l, ok := obj.([]value); ok {
		out := make([]value, 0, len(idx))
		for _, i := range idx {
			out = append(out, l[i])
		}
		return out, nil
	}
	var b strings.Builder
	for _, i := range idx {
		b.WriteRune(runes[i])
	}
	return b.String(), nil
}

func (st *state) evalBinary(e *binaryOp) (value, error) {
	l, err := st.eval(e.l)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "and":
		if !truth(l) {
			return l, nil
		}
		return st.eval(e.r)
	case "or":
		if truth(l) {
			return l, nil
		}
		return st.eval(e.r)
	}
	r, err := st.eval(e.r)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "<", ">", "<=", ">=":
		c, err := compare(l, r)
		if err != nil {
			return nil, err
		}
		switch e.op {
		case "<":
			return c < 0, nil
		case ">":
			return c > 0, nil
		case "<=":
			return c <= 0, nil
		}
		return c >= 0, nil
	case "in", "not in":
		in, err := contains(r, l)
		if err != nil {
			return nil, err
		}
		return in == (e.op == "in"), nil
	case "~":
		s := str(l) + str(r)
		if len(s) > maxOutput {
			return nil, fmt.Errorf("%w: string too long", ErrRender)
		}
		return s, nil
	case "+":
		switch x := l.(type) {
		case string:
			if y, ok := r.(string); ok {
				if len(x)+len(y) > maxOutput {
					return nil, fmt.Errorf("%w: string too long", ErrRender)
				}
				return x + y, nil
			}
		case []value:
			if y, ok := r.([]value); ok {
				out := make([]value, 0, len(x)+len(y))
				return append(append(out, x...), y...), nil
			}
		}
	}
	return arith(e.op, l, r)
}

func arith(op string, l, r value) (value, error) {
	if s, ok := l.(string); ok && op == "*" {
		if n, ok := r.(int64); ok {
			if n <= 0 {
				return "", nil
			}
			if int64(len(s))*n > maxOutput {
				return nil, fmt.Errorf("%w: string too long", ErrRender)
			}
			return strings.Repeat(s, int(n)), nil
		}
	}
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	lf, lok := toFloat(l)
	rf, rok := toFloat(r)
	if _, b := l.(bool); b {
		lok = false
	}
	if _, b := r.(bool); b {
		rok = false
	}
	if !lok || !rok {
		return nil, fmt.Errorf("%w: unsupported operand types for %s: %s and %s", ErrRender, op, typeName(l), typeName(r))
	}
	both := lInt && rInt
	switch op {
	case "+":
		if both {
			return li + ri, nil
		}
		return lf + rf, nil
	case "-":
		if both {
			return li - ri, nil
		}
		return lf - rf, nil
	case "*":
		if both {
			return li * ri, nil
		}
		return lf * rf, nil
	case "/":
		if rf == 0 {
			return nil, fmt.Errorf("%w: division by zero", ErrRender)
		}
		return lf / rf, nil
	case "//", "%":
		if rf == 0 {
			return nil, fmt.Errorf("%w: division by zero", ErrRender)
		}
		if both {
			q := li / ri
			if (li%ri != 0) && ((li < 0) != (ri < 0)) {
				q--
			}
			if op == "//" {
				return q, nil
			}
			return li - q*ri, nil
		}
		q := math.Floor(lf / rf)
		if op == "//" {
			return q, nil
		}
		return lf - q*rf, nil
	case "**":
		if both && ri >= 0 {
			return int64(math.Pow(float64(li), float64(ri))), nil
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("%w: unknown operator %s", ErrRender, op)
}

func compare(l, r value) (int, error) {
	if ls, ok := l.(string); ok {
		if rs, ok := r.(string); ok {
			return strings.Compare(ls, rs), nil
		}
	}
	lf, lok := toFloat(l)
	rf, rok := toFloat(r)
	if !lok || !rok {
		return 0, fmt.Errorf("%w: cannot compare %s with %s", ErrRender, typeName(l), typeName(r))
	}
	switch {
	case lf < rf:
		return -1, nil
	case lf > rf:
		return 1, nil
	}
	return 0, nil
}

func contains(container, item value) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, fmt.Errorf("%w: 'in <string>' requires a string, not %s", ErrRender, typeName(item))
		}
		return strings.Contains(c, s), nil
	case []value:
		for _, x := range c {
			if equal(x, item) {
				return true, nil
			}
		}
		return false, nil
	case *dict:
		s, ok := item.(string)
		if !ok {
			return false, nil
		}
		_, has := c.m[s]
		return has, nil
	case undefinedT, nil:
		return false, nil
	}
	return false, fmt.Errorf("%w: %s is not a container", ErrRender, typeName(container))
}

// ---- calls: globals, methods, macros ----

func (st *state) evalCall(e *callOp) (value, error) {
	args, err := st.evalList(e.args)
	if err != nil {
		return nil, err
	}
	kw, err := st.evalKw(e.kw)
	if err != nil {
		return nil, err
	}
	if ga, ok := e.fn.(*getAttr); ok { // method call
		obj, err := st.eval(ga.obj)
		if err != nil {
			return nil, err
		}
		if d, ok := obj.(*dict); ok {
			if m, ok := d.m[ga.name].(*macro); ok {
				return st.callMacro(m, args, kw)
			}
		}
		return callMethod(obj, ga.name, args)
	}
	if nr, ok := e.fn.(*nameRef); ok {
		if v, ok := st.sc.lookup(nr.name); ok {
			if m, ok := v.(*macro); ok {
				return st.callMacro(m, args, kw)
			}
			return nil, fmt.Errorf("%w: %s %q is not callable", ErrRender, typeName(v), nr.name)
		}
		switch nr.name {
		case "raise_exception":
			msg := "raise_exception"
			if len(args) > 0 {
				msg = str(args[0])
			}
			return nil, fmt.Errorf("%w: template error: %s", ErrRender, msg)
		case "namespace":
			d := newDict()
			d.ns = true
			if len(args) == 1 {
				if src, ok := args[0].(*dict); ok {
					for _, k := range src.keys {
						d.set(k, src.m[k])
					}
				}
			}
			for _, k := range e.kw {
				d.set(k.name, kw[k.name])
			}
			return d, nil
		case "range":
			return rangeFn(args)
		case "dict":
			d := newDict()
			for _, k := range e.kw {
				d.set(k.name, kw[k.name])
			}
			return d, nil
		}
		return nil, fmt.Errorf("%w: unknown function %q", ErrRender, nr.name)
	}
	return nil, fmt.Errorf("%w: expression is not callable", ErrRender)
}

func rangeFn(args []value) (value, error) {
	var a [3]int64
	a[2] = 1
	for i, v := range args {
		n, ok := v.(int64)
		if !ok || i > 2 {
			return nil, fmt.Errorf("%w: bad range() arguments", ErrRender)
		}
		a[i] = n
	}
	start, stop, step := int64(0), a[0], int64(1)
	switch len(args) {
	case 0:
		return nil, fmt.Errorf("%w: range() needs an argument", ErrRender)
	case 2:
		start, stop = a[0], a[1]
	case 3:
		start, stop, step = a[0], a[1], a[2]
	}
	if step == 0 {
		return nil, fmt.Errorf("%w: range() step is zero", ErrRender)
	}
	n := (stop - start + step - sign(step)) / step
	if n < 0 {
		n = 0
	}
	if n > maxSteps {
		return nil, fmt.Errorf("%w: range of %d items", ErrRender, n)
	}
	out := make([]value, 0, n)
	for i := int64(0); i < n; i++ {
		out = append(out, start+i*step)
	}
	return out, nil
}

func sign(x int64) int64 {
	if x < 0 {
		return -1
	}
	return 1
}

func (st *state) callMacro(m *macro, args []value, kw map[string]value) (value, error) {
	if err := st.step(); err != nil {
		return nil, err
	}
	if st.calls >= maxCalls {
		return nil, fmt.Errorf("%w: macros nested too deeply", ErrRender)
	}
	if len(args) > len(m.params) {
		return nil, fmt.Errorf("%w: macro %s takes %d arguments, got %d", ErrRender, m.name, len(m.params), len(args))
	}
	// Macros see the template's top-level variables, not the caller's.
	root := st.sc
	for root.parent != nil && root.parent.parent != nil {
		root = root.parent
	}
	sc := &scope{vars: map[string]value{}, parent: root}
	for i, p := range m.params {
		switch {
		case i < len(args):
			sc.vars[p] = args[i]
		case kw != nil && kw[p] != nil:
			sc.vars[p] = kw[p]
		case m.defaults[i] != nil:
			v, err := st.eval(m.defaults[i])
			if err != nil {
				return nil, err
			}
			sc.vars[p] = v
		default:
			sc.vars[p] = undefined
		}
	}
	saved := st.sc
	st.sc = sc
	st.calls++
	var b strings.Builder
	err := st.render(m.body, &b)
	st.calls--
	st.sc = saved
	if err == errBreak || err == errContinue {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return b.String(), nil
}

func callMethod(obj value, name string, args []value) (value, error) {
	argStr := func(i int) (string, error) {
		if i >= len(args) {
			return "", fmt.Errorf("%w: %s() needs %d arguments", ErrRender, name, i+1)
		}
		s, ok := args[i].(string)
		if !ok {
			return "", fmt.Errorf("%w: %s() argument must be a string, not %s", ErrRender, name, typeName(args[i]))
		}
		return s, nil
	}
	switch x := obj.(type) {
	case string:
		switch name {
		case "strip", "lstrip", "rstrip":
			cut := " \t\n\r\f\v"
			if len(args) > 0 && args[0] != nil {
				s, err := argStr(0)
				if err != nil {
					return nil, err
				}
				cut = s
			}
			switch name {
			case "strip":
				return strings.Trim(x, cut), nil
			case "lstrip":
				return strings.TrimLeft(x, cut), nil
			}
			return strings.TrimRight(x, cut), nil
		case "upper":
			return strings.ToUpper(x), nil
		case "lower":
			return strings.ToLower(x), nil
		case "title":
			return title(x), nil
		case "capitalize":
			return capitalize(x), nil
		case "startswith", "endswith":
			s, err := argStr(0)
			if err != nil {
				return nil, err
			}
			if name == "startswith" {
				return strings.HasPrefix(x, s), nil
			}
			return strings.HasSuffix(x, s), nil
		case "split":
			if len(args) == 0 || args[0] == nil {
				return toList(strings.Fields(x)), nil
			}
			s, err := argStr(0)
			if err != nil {
				return nil, err
			}
			if s == "" {
				return nil, fmt.Errorf("%w: empty separator", ErrRender)
			}
			return toList(strings.Split(x, s)), nil
		case "replace":
			a, err := argStr(0)
			if err != nil {
				return nil, err
			}
			b, err := argStr(1)
			if err != nil {
				return nil, err
			}
			return replace(x, a, b)
		case "find":
			s, err := argStr(0)
			if err != nil {
				return nil, err
			}
			i := strings.Index(x, s)
			if i > 0 {
				i = utf8.RuneCountInString(x[:i])
			}
			return int64(i), nil
		}
	case *dict:
		switch name {
		case "items":
			out := make([]value, 0, len(x.keys))
			for _, k := range x.keys {
				out = append(out, []value{k, x.m[k]})
			}
			return out, nil
		case "keys":
			out := make([]value, 0, len(x.keys))
			for _, k := range x.keys {
				out = append(out, k)
			}
			return out, nil
		case "values":
			out := make([]value, 0, len(x.keys))
			for _, k := range x.keys {
				out = append(out, x.m[k])
			}
			return out, nil
		case "get":
			k, err := argStr(0)
			if err != nil {
				return nil, err
			}
			if v, ok := x.m[k]; ok {
				return v, nil
			}
			if len(args) > 1 {
				return args[1], nil
			}
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%w: %s has no method %q", ErrRender, typeName(obj), name)
}

func replace(s, a, b string) (value, error) {
	if a != "" && len(b) > len(a) && int64(strings.Count(s, a))*int64(len(b)-len(a))+int64(len(s)) > maxOutput {
		return nil, fmt.Errorf("%w: string too long", ErrRender)
	}
	if a == "" && int64(len(s)+1)*int64(len(b))+int64(len(s)) > maxOutput {
		return nil, fmt.Errorf("%w: string too long", ErrRender)
	}
	return strings.ReplaceAll(s, a, b), nil
}

func toList(ss []string) []value {
	out := make([]value, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// title is Python's str.title: the first letter of every run of letters
// upper case, the rest lower case.
func title(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			prevLetter = true
		} else {
			b.WriteRune(r)
			prevLetter = false
		}
	}
	return b.String()
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}

// ---- tests ----

func runTest(name string, v value, args []value, st *state) (bool, error) {
	switch name {
	case "defined":
		return !isUndefined(v), nil
	case "undefined":
		return isUndefined(v), nil
	case "none":
		return v == nil, nil
	case "string":
		_, ok := v.(string)
		return ok, nil
	case "number":
		switch v.(type) {
		case int64, float64:
			return true, nil
		}
		return false, nil
	case "integer":
		_, ok := v.(int64)
		return ok, nil
	case "float":
		_, ok := v.(float64)
		return ok, nil
	case "boolean":
		_, ok := v.(bool)
		return ok, nil
	case "true":
		b, ok := v.(bool)
		return ok && b, nil
	case "false":
		b, ok := v.(bool)
		return ok && !b, nil
	case "mapping":
		d, ok := v.(*dict)
		return ok && !d.ns, nil
	case "iterable":
		switch v.(type) {
		case string, []value, *dict:
			return true, nil
		}
		return false, nil
	case "sequence":
		switch v.(type) {
		case string, []value, *dict:
			return true, nil
		}
		return false, nil
	case "callable":
		_, ok := v.(*macro)
		return ok, nil
	case "even", "odd":
		n, ok := v.(int64)
		if !ok {
			return false, fmt.Errorf("%w: %q test on %s", ErrRender, name, typeName(v))
		}
		return (n%2 == 0) == (name == "even"), nil
	case "divisibleby":
		n, ok1 := v.(int64)
		if len(args) != 1 {
			return false, fmt.Errorf("%w: divisibleby needs one argument", ErrRender)
		}
		d, ok2 := args[0].(int64)
		if !ok1 || !ok2 || d == 0 {
			return false, fmt.Errorf("%w: bad divisibleby", ErrRender)
		}
		return n%d == 0, nil
	case "lower":
		s, ok := v.(string)
		return ok && s == strings.ToLower(s), nil
	case "upper":
		s, ok := v.(string)
		return ok && s == strings.ToUpper(s), nil
	case "equalto", "eq", "==", "sameas":
		if len(args) != 1 {
			return false, fmt.Errorf("%w: %s needs one argument", ErrRender, name)
		}
		return equal(v, args[0]), nil
	case "ne", "!=":
		if len(args) != 1 {
			return false, fmt.Errorf("%w: %s needs one argument", ErrRender, name)
		}
		return !equal(v, args[0]), nil
	case "lt", "<", "gt", ">", "le", "<=", "ge", ">=", "lessthan", "greaterthan":
		if len(args) != 1 {
			return false, fmt.Errorf("%w: %s needs one argument", ErrRender, name)
		}
		c, err := compare(v, args[0])
		if err != nil {
			return false, err
		}
		switch name {
		case "lt", "<", "lessthan":
			return c < 0, nil
		case "gt", ">", "greaterthan":
			return c > 0, nil
		case "le", "<=":
			return c <= 0, nil
		}
		return c >= 0, nil
	case "in":
		if len(args) != 1 {
			return false, fmt.Errorf("%w: in needs one argument", ErrRender)
		}
		return contains(args[0], v)
	}
	return false, fmt.Errorf("%w: unknown test %q", ErrRender, name)
}

// ---- filters ----

func (st *state) filter(name string, v value, args []value, kw map[string]value) (value, error) {
	arg := func(i int, key string) value {
		if i < len(args) {
			return args[i]
		}
		if kw != nil {
			if x, ok := kw[key]; ok {
				return x
			}
		}
		return undefined
	}
	switch name {
	case "trim":
		return strings.TrimSpace(str(v)), nil
	case "upper":
		return strings.ToUpper(str(v)), nil
	case "lower":
		return strings.ToLower(str(v)), nil
	case "title":
		return title(str(v)), nil
	case "capitalize":
		return capitalize(str(v)), nil
	case "string":
		return str(v), nil
	case "safe", "e", "escape":
		if name == "safe" {
			return v, nil
		}
		return htmlEscape(str(v)), nil
	case "length", "count":
		switch x := v.(type) {
		case string:
			return int64(utf8.RuneCountInString(x)), nil
		case []value:
			return int64(len(x)), nil
		case *dict:
			return int64(len(x.keys)), nil
		case undefinedT:
			return int64(0), nil
		}
		return nil, fmt.Errorf("%w: %s has no length", ErrRender, typeName(v))
	case "tojson":
		indent := 0
		if n, ok := arg(0, "indent").(int64); ok {
			indent = int(n)
		}
		sortKeys := truth(arg(99, "sort_keys"))
		var b strings.Builder
		toJSON(&b, v, indent, sortKeys, 0)
		return b.String(), nil
	case "int":
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				f, err2 := strconv.ParseFloat(strings.TrimSpace(x), 64)
				if err2 != nil {
					return int64(0), nil
				}
				return int64(f), nil
			}
			return n, nil
		}
		return int64(0), nil
	case "float":
		if f, ok := toFloat(v); ok {
			return f, nil
		}
		if s, ok := v.(string); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return f, nil
			}
		}
		return 0.0, nil
	case "abs":
		switch x := v.(type) {
		case int64:
			if x < 0 {
				return -x, nil
			}
			return x, nil
		case float64:
			return math.Abs(x), nil
		}
		return nil, fmt.Errorf("%w: abs of %s", ErrRender, typeName(v))
	case "default", "d":
		def := arg(0, "default_value")
		if isUndefined(def) {
			def = ""
		}
		if isUndefined(v) || truth(arg(1, "boolean")) && !truth(v) {
			return def, nil
		}
		return v, nil
	case "list":
		switch x := v.(type) {
		case []value:
			return x, nil
		case string:
			out := []value{}
			for _, r := range x {
				out = append(out, string(r))
			}
			return out, nil
		case *dict:
			return callMethod(x, "keys", nil)
		case undefinedT:
			return []value{}, nil
		}
		return nil, fmt.Errorf("%w: cannot make a list of %s", ErrRender, typeName(v))
	case "first", "last":
		switch x := v.(type) {
		case []value:
			if len(x) == 0 {
				return undefined, nil
			}
			if name == "first" {
				return x[0], nil
			}
			return x[len(x)-1], nil
		case string:
			r := []rune(x)
			if len(r) == 0 {
				return undefined, nil
			}
			if name == "first" {
				return string(r[0]), nil
			}
			return string(r[len(r)-1]), nil
		}
		return undefined, nil
	case "join":
		sep := ""
		if s, ok := arg(0, "d").(string); ok {
			sep = s
		}
		items, err := iterItems(v)
		if err != nil {
			return nil, err
		}
		if attr, ok := arg(1, "attribute").(string); ok {
			for i, it := range items {
				items[i] = attrOf(it, attr)
			}
		}
		var b strings.Builder
		for i, it := range items {
			if i > 0 {
				b.WriteString(sep)
			}
			b.WriteString(str(it))
			if b.Len() > maxOutput {
				return nil, fmt.Errorf("%w: string too long", ErrRender)
			}
		}
		return b.String(), nil
	case "replace":
		a, ok1 := arg(0, "old").(string)
		b, ok2 := arg(1, "new").(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%w: replace needs two strings", ErrRender)
		}
		return replace(str(v), a, b)
	case "items":
		if d, ok := v.(*dict); ok {
			return callMethod(d, "items", nil)
		}
		return []value{}, nil
	case "select", "reject", "selectattr", "rejectattr":
		items, err := iterItems(v)
		if err != nil {
			return nil, err
		}
		attrMode := strings.HasSuffix(name, "attr")
		want := strings.HasPrefix(name, "select")
		rest := args
		attr := ""
		if attrMode {
			if len(args) == 0 {
				return nil, fmt.Errorf("%w: %s needs an attribute name", ErrRender, name)
			}
			s, ok := args[0].(string)
			if !ok {
				return nil, fmt.Errorf("%w: %s needs an attribute name", ErrRender, name)
			}
			attr, rest = s, args[1:]
		}
		out := []value{}
		for _, it := range items {
			x := it
			if attrMode {
				x = attrOf(it, attr)
			}
			var ok bool
			if len(rest) == 0 {
				ok = truth(x)
			} else {
				tn, isStr := rest[0].(string)
				if !isStr {
					return nil, fmt.Errorf("%w: %s: test name must be a string", ErrRender, name)
				}
				ok, err = runTest(tn, x, rest[1:], st)
				if err != nil {
					return nil, err
				}
			}
			if ok == want {
				out = append(out, it)
			}
		}
		return out, nil
	case "map":
		items, err := iterItems(v)
		if err != nil {
			return nil, err
		}
		out := make([]value, len(items))
		if a, ok := arg(99, "attribute").(string); ok {
			for i, it := range items {
				out[i] = attrOf(it, a)
			}
			return out, nil
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("%w: map needs a filter or attribute=", ErrRender)
		}
		fn, ok := args[0].(string)
		if !ok {
			return nil, fmt.Errorf("%w: map needs a filter name", ErrRender)
		}
		for i, it := range items {
			if out[i], err = st.filter(fn, it, args[1:], nil); err != nil {
				return nil, err
			}
		}
		return out, nil
	case "unique":
		items, err := iterItems(v)
		if err != nil {
			return nil, err
		}
		out := []value{}
		for _, it := range items {
			dup := false
			for _, o := range out {
				if equal(o, it) {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, it)
			}
		}
		return out, nil
	case "reverse":
		switch x := v.(type) {
		case string:
			r := []rune(x)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r), nil
		case []value:
			out := make([]value, len(x))
			for i := range x {
				out[len(x)-1-i] = x[i]
			}
			return out, nil
		}
		return nil, fmt.Errorf("%w: cannot reverse %s", ErrRender, typeName(v))
	case "indent":
		width := int64(4)
		if n, ok := arg(0, "width").(int64); ok {
			width = n
		}
		if width < 0 || width > 1024 {
			return nil, fmt.Errorf("%w: bad indent width", ErrRender)
		}
		pad := strings.Repeat(" ", int(width))
		lines := strings.Split(str(v), "\n")
		for i := 1; i < len(lines); i++ {
			if lines[i] != "" || truth(arg(2, "blank")) {
				lines[i] = pad + lines[i]
			}
		}
		s := strings.Join(lines, "\n")
		if truth(arg(1, "first")) {
			s = pad + s
		}
		if len(s) > maxOutput {
			return nil, fmt.Errorf("%w: string too long", ErrRender)
		}
		return s, nil
	}
	return nil, fmt.Errorf("%w: unknown filter %q", ErrRender, name)
}

func iterItems(v value) ([]value, error) {
	switch x := v.(type) {
	case []value:
		return append([]value(nil), x...), nil
	case *dict:
		out := make([]value, 0, len(x.keys))
		for _, k := range x.keys {
			out = append(out, k)
		}
		return out, nil
	case string:
		out := []value{}
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case undefinedT, nil:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: %s is not iterable", ErrRender, typeName(v))
}

func attrOf(v value, path string) value {
	for _, part := range strings.Split(path, ".") {
		d, ok := v.(*dict)
		if !ok {
			return undefined
		}
		x, ok := d.m[part]
		if !ok {
			return undefined
		}
		v = x
	}
	return v
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
