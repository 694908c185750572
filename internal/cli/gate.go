package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// exitGate is the exit status of a run whose result met a --fail-if gate:
// distinct from errors (1) and usage or input errors (2), so that a
// pipeline step can tell "the data changed" from "the step broke".
const exitGate = 3

// gateMet is the error of a run whose result met a gate: Main prints it
// and exits with exitGate. The result has been printed.
type gateMet struct{ msg string }

func (g gateMet) Error() string { return g.msg }

// condition is one FIELD OP NUMBER of --fail-if.
type condition struct {
	field string
	op    string
	value float64
}

func (c condition) String() string { return fmt.Sprintf("%s %s %g", c.field, c.op, c.value) }

// holds reports whether v meets the condition; NaN (a JSON null) never does.
func (c condition) holds(v float64) bool {
	switch c.op {
	case "<":
		return v < c.value
	case "<=":
		return v <= c.value
	case ">":
		return v > c.value
	case ">=":
		return v >= c.value
	}
	return false
}

// gate is the --fail-if flag: conditions on the numeric fields of a
// command's JSON output, met if any holds.
type gate struct {
	fields []string // the numeric fields of the command's JSON
	conds  []condition
	text   string
}

// newGate registers --fail-if on fs for the JSON fields of v's type (a
// struct, or a pointer to one, with json tags), and of more's types (a
// command whose output depends on its flags: only checks the conditions
// against the output chosen).
func newGate(fs *flagSet, v any, more ...any) *gate {
	g := &gate{fields: numericFields(reflect.TypeOf(v))}
	for _, m := range more {
		g.fields = append(g.fields, numericFields(reflect.TypeOf(m))...)
	}
	slices.Sort(g.fields)
	g.fields = slices.Compact(g.fields)
	fs.Var(g, "fail-if", "exit with status 3 (the result still printed) if the result meets `EXPR`, FIELD OP NUMBER: OP one of < <= > >=, FIELD a numeric field of the JSON (e.g. 'p_value < 0.01'); several, comma-separated or repeated: any")
	return g
}

func (g *gate) String() string {
	if g == nil {
		return ""
	}
	return g.text
}

// Set parses "FIELD OP NUMBER[, FIELD OP NUMBER...]"; a repeated flag adds
// its conditions.
func (g *gate) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		c, err := parseCondition(part, g.fields)
		if err != nil {
			return err
		}
		g.conds = append(g.conds, c)
	}
	if g.text != "" {
		g.text += ", "
	}
	g.text += s
	return nil
}

// parseCondition parses one FIELD OP NUMBER, spaces optional.
func parseCondition(s string, fields []string) (condition, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return condition{}, fmt.Errorf("%q: want FIELD OP NUMBER with OP one of < <= > >= (e.g. p_value < 0.01)", s)
	}
	c := condition{field: strings.TrimSpace(s[:i]), op: s[i : i+1]}
	rest := s[i+1:]
	if strings.HasPrefix(rest, "=") {
		c.op += "="
		rest = rest[1:]
	}
	if c.field == "" {
		return condition{}, fmt.Errorf("%q: no field before %s", s, c.op)
	}
	if !slices.Contains(fields, c.field) {
		return condition{}, fmt.Errorf("%q: unknown field %q (numeric fields: %s)", s, c.field, strings.Join(fields, ", "))
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return condition{}, fmt.Errorf("%q: want a finite number after %s", s, c.op)
	}
	c.value = v
	return c, nil
}

// only refuses, as a usage error, the conditions on fields that v's JSON
// (the output of the run, what) does not have.
func (g *gate) only(v any, what string) error {
	fields := numericFields(reflect.TypeOf(v))
	for _, c := range g.conds {
		if !slices.Contains(fields, c.field) {
			return usagef("--fail-if %s: %s has no field %q (numeric fields: %s)", c, what, c.field, strings.Join(fields, ", "))
		}
	}
	return nil
}

// set reports whether --fail-if was given.
func (g *gate) set() bool { return len(g.conds) > 0 }

// uses reports whether a condition reads the field.
func (g *gate) uses(field string) bool {
	return slices.ContainsFunc(g.conds, func(c condition) bool { return c.field == field })
}

// check returns the conditions that v (the value the command prints as
// JSON) meets, each with the field's value: it reads the JSON, so that the
// gate sees what the user sees. A field that is null (NaN, or not
// estimated) or absent meets no condition.
func (g *gate) check(v any) ([]string, error) {
	if !g.set() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var met []string
	for _, c := range g.conds {
		f, ok := m[c.field].(float64)
		if ok && c.holds(f) {
			met = append(met, fmt.Sprintf("%s (%s = %.4g)", c, c.field, f))
		}
	}
	return met, nil
}

// numericFields returns the JSON names of the numeric fields of a struct
// type (numbers, pointers to numbers, embedded structs' fields), sorted.
func numericFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			names = append(names, numericFields(ft)...)
			continue
		}
		if !f.IsExported() || name == "" {
			continue
		}
		switch ft.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
