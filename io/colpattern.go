package io

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
)

// ExpandColumns returns the names of the columns that selectors pick among
// names (the fields of a schema, or a CSV header; for the files of a
// dataset, followed by their hive partition keys), in the order of the
// selectors and, within a pattern, in the order of names. A selector is
//
//   - the name of a column: that column, even if the name has pattern
//     characters in it;
//   - else a glob, if it has any of * ? [: every column whose whole name
//     matches it, where * matches any run of characters (none included), ?
//     one character, [abc], [a-z] one of a set and [!a-z] one outside it,
//     and \ makes the next character literal. "emb_*" picks emb_0 …
//     emb_767 in schema order; "x[0-9]" picks x0 to x9 but not x10;
//   - else a slice of a column, name[lo:hi], if name is a column: elements
//     lo to hi (hi excluded, counted from 0) of a fixed-size list, either
//     bound omitted for the list's start or end, "emb[0:128]" the first 128
//     values of an embedding. It is kept as given; the reader checks that
//     the column is a list and the bounds within it.
//
// A selector naming no column, or a glob matching none, is an error
// matching ErrColumn that names it; source names the input in the message.
// A column picked twice (by a name and a glob, or two globs) is kept twice:
// callers that mind say so (the command warns).
func ExpandColumns(source string, names, selectors []string) ([]string, error) {
	var out []string
	for _, sel := range selectors {
		if containsName(names, sel) {
			out = append(out, sel)
			continue
		}
		if sl, ok := parseSlice(sel); ok && containsName(names, sl.name) {
			out = append(out, sel)
			continue
		}
		if !strings.ContainsAny(sel, "*?[") {
			// Not a pattern: findColumn's error lists what there is.
			if _, err := findColumn(source, names, sel); err != nil {
				return nil, err
			}
		}
		re, err := globRegexp(sel)
		if err != nil {
			return nil, newError(ErrColumn, source, nil, "column pattern %q: %v", sel, err)
		}
		n := len(out)
		for _, name := range names {
			if re.MatchString(name) {
				out = append(out, name)
			}
		}
		if len(out) == n {
			return nil, newError(ErrColumn, source, nil, "column pattern %q matches no column (available: %s)", sel, quoteList(names, 50))
		}
	}
	return out, nil
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// globRegexp compiles a glob (see ExpandColumns) to an anchored regular
// expression.
func globRegexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	rs := []rune(glob)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(rs) {
				return nil, errGlob("ends with a lone \\")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case '[':
			j := i + 1
			if j < len(rs) && (rs[j] == '!' || rs[j] == '^') {
				j++
			}
			if j < len(rs) && rs[j] == ']' { // a ] first is literal
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j == len(rs) {
				return nil, errGlob("[ without ]")
			}
			set := rs[i+1 : j]
			b.WriteByte('[')
			if set[0] == '!' || set[0] == '^' {
				b.WriteByte('^')
				set = set[1:]
			}
			for _, r := range set {
				if r == '\\' || r == '[' || r == ']' || r == '^' {
					b.WriteByte('\\')
				}
				b.WriteRune(r)
			}
			b.WriteByte(']')
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, errGlob("not a valid set: " + err.Error())
	}
	return re, nil
}

// listSlice is a selector name[lo:hi]; hasLo and hasHi say which bounds
// were given.
type listSlice struct {
	name         string
	lo, hi       int
	hasLo, hasHi bool
}

// sliceSyntax is name[lo:hi] with optional decimal bounds.
var sliceSyntax = regexp.MustCompile(`^(.+)\[([0-9]*):([0-9]*)\]$`)

// parseSlice parses a selector name[lo:hi].
func parseSlice(sel string) (listSlice, bool) {
	m := sliceSyntax.FindStringSubmatch(sel)
	if m == nil {
		return listSlice{}, false
	}
	s := listSlice{name: m[1]}
	var err error
	if m[2] != "" {
		if s.lo, err = strconv.Atoi(m[2]); err != nil {
			return listSlice{}, false
		}
		s.hasLo = true
	}
	if m[3] != "" {
		if s.hi, err = strconv.Atoi(m[3]); err != nil {
			return listSlice{}, false
		}
		s.hasHi = true
	}
	return s, true
}

// text returns the slice's bounds as given, without brackets.
func (s listSlice) text() string {
	var b strings.Builder
	if s.hasLo {
		b.WriteString(strconv.Itoa(s.lo))
	}
	b.WriteByte(':')
	if s.hasHi {
		b.WriteString(strconv.Itoa(s.hi))
	}
	return b.String()
}

// bounds returns the slice's elements in a list of size n, or an error
// saying why they are not in it.
func (s listSlice) bounds(n int) (lo, hi int, err error) {
	lo, hi = 0, n
	if s.hasLo {
		lo = s.lo
	}
	if s.hasHi {
		hi = s.hi
	}
	switch {
	case lo >= hi:
		return 0, 0, fmt.Errorf("selects no element (%d:%d)", lo, hi)
	case hi > n:
		return 0, 0, fmt.Errorf("ends at element %d, past the list's %d", hi, n)
	}
	return lo, hi, nil
}

type errGlob string

func (e errGlob) Error() string { return string(e) }

// Columns returns the names of the columns of each view, patterns expanded,
// in the order their values appear in a row of the view.
func (e *Extractor) Columns() (x, y []string) {
	for _, c := range e.cols {
		switch c.view {
		case viewX:
			x = append(x, c.label())
		case viewY:
			y = append(y, c.label())
		}
	}
	return x, y
}

// Columns returns the names of the columns of each view, patterns expanded
// (see ExpandColumns), in the order their values appear in a row.
func (r *Reader) Columns() (x, y []string) { return r.ext.Columns() }

// fieldNames returns the names of the schema's fields.
func fieldNames(schema *arrow.Schema) []string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return names
}

// withPartitionKeys returns names followed by the partition keys that are
// not among them: the columns a selector can pick.
func withPartitionKeys(names []string, parts []Partition) []string {
	out := names
	for _, p := range parts {
		if !containsName(names, p.Key) {
			if len(out) == len(names) {
				out = append([]string(nil), names...)
			}
			out = append(out, p.Key)
		}
	}
	return out
}

// expandViews expands the selectors of both views against names.
func expandViews(source string, names []string, opts *Options) error {
	x, err := ExpandColumns(source, names, opts.X)
	if err != nil {
		return err
	}
	y, err := ExpandColumns(source, names, opts.Y)
	if err != nil {
		return err
	}
	opts.X, opts.Y = x, y
	return nil
}

// Columns returns the names of the columns of each view, patterns expanded
// against the first file's schema (the other files must agree: see
// OpenDataset), in the order their values appear in a row.
func (r *DatasetReader) Columns() (x, y []string) {
	w := 0
	for _, c := range r.ref { // X columns, then Y columns, then the time column
		switch {
		case w < r.dimX:
			x = append(x, c.name)
		case w < r.dimX+r.dimY:
			y = append(y, c.name)
		}
		w += c.width
	}
	return x, y
}
