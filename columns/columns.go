package columns

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/internal/ioerr"
)

// Expand returns the names of the columns that selectors pick among
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
func Expand(source string, names, selectors []string) ([]string, error) {
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
			return nil, ioerr.New(ErrColumn, source, nil, "column pattern %q: %v", sel, err)
		}
		n := len(out)
		for _, name := range names {
			if re.MatchString(name) {
				out = append(out, name)
			}
		}
		if len(out) == n {
			return nil, ioerr.New(ErrColumn, source, nil, "column pattern %q matches no column (available: %s)", sel, ioerr.QuoteList(names, 50))
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

// globRegexp compiles a glob (see Expand) to an anchored regular
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

// ErrColumn is matched by errors about the column selection: a column that
// is missing, ambiguous (two columns with the name) or of a type that is
// not numeric, and an empty selection. It is the same value as
// decode.ErrColumn.
var ErrColumn = ioerr.ErrColumn

// Spec is a column selection as a user writes it: the selectors of the two
// views (names, globs, slices of list columns: see Expand) and the time
// column.
type Spec struct {
	// X and Y name the columns of the two views, in the order their values
	// appear in a row of the view. A column is a number (float32, float64,
	// or a signed or unsigned integer of any width) of width 1, or a
	// fixed-size list of numbers (an embedding vector) whose width is the
	// list size. Columns may come from anywhere in the schema, in any order;
	// a column may appear in both views. At least one column is needed.
	X, Y []string
	// TimeColumn, if not empty, names a column of times: an Arrow timestamp
	// of any unit, or an integer count of TimeUnit since the Unix epoch.
	TimeColumn string
	// TimeUnit is the unit of an integer TimeColumn (the zero value is
	// arrow.Second). It is ignored for timestamp columns, which carry their
	// own unit.
	TimeUnit arrow.TimeUnit
}

// Column is one selected column, resolved against an input's schema.
type Column struct {
	// Name is the column's name in the schema (or CSV header), or the
	// partition key.
	Name string
	// Field is the column's index among the fields given to Select, or -1
	// for a partition key.
	Field int
	// Lo and Hi are the elements read, Lo to Hi excluded: those of a slice
	// name[lo:hi] of a fixed-size list, all the elements of a whole list,
	// 0 and 1 for a number. A list of a size unknown here (a CSV column, a
	// list of size 0) has Lo and Hi 0 and 1 until its reader checks it.
	Lo, Hi int
	// Slice is true when a slice name[lo:hi] was asked for.
	Slice bool
	// Partition is the value of a hive partition key, the same on every
	// row of the input; nil for a column of the file.
	Partition *dataset.Partition
}

// Width returns the number of values of the column in a row.
func (c Column) Width() int { return c.Hi - c.Lo }

// Label returns the column as selected: its name, or name[lo:hi] for a
// slice.
func (c Column) Label() string {
	if !c.Slice {
		return c.Name
	}
	return fmt.Sprintf("%s[%d:%d]", c.Name, c.Lo, c.Hi)
}

// Overlaps reports whether two different selections of one list column (a
// slice and the whole column, or two slices) share elements.
func (c Column) Overlaps(d Column) bool {
	if c.Name != d.Name || c.Label() == d.Label() || !c.Slice && !d.Slice {
		return false
	}
	return c.Lo < d.Hi && d.Lo < c.Hi
}

// View is the columns of one view, in the order their values appear in a
// row.
type View []Column

// Labels returns the labels of the view's columns.
func (v View) Labels() []string {
	out := make([]string, len(v))
	for i, c := range v {
		out[i] = c.Label()
	}
	return out
}

// Width returns the number of values in a row of the view.
func (v View) Width() int {
	w := 0
	for _, c := range v {
		w += c.Width()
	}
	return w
}

// Selection is a Spec resolved against an input: the columns of each view,
// patterns expanded, and the time column.
type Selection struct {
	X, Y View
	// Time is the time column, if the Spec names one.
	Time *Column
	// TimeUnit is the Spec's.
	TimeUnit arrow.TimeUnit
}

// Select resolves spec against the fields of an input (a schema, or a CSV
// header, whose fields have a nil Type) and its hive partition values. It
// is the one place where selectors are read: a reader binds the columns it
// returns to its record batches by name, and reports their widths and
// labels to its callers. A name that is not a field may be an integer
// partition key. source names the input in messages; errors match
// ErrColumn: an empty selection, a missing or ambiguous column, a pattern
// that matches nothing, a slice of a column that is not a fixed-size list
// or out of its bounds, a partition key that is also a column or is not an
// integer.
func Select(source string, fields []arrow.Field, parts []dataset.Partition, spec Spec) (Selection, error) {
	sel := Selection{TimeUnit: spec.TimeUnit}
	if len(spec.X)+len(spec.Y) == 0 {
		return sel, ioerr.New(ErrColumn, source, nil, "no columns selected for X or Y")
	}
	if spec.TimeUnit > arrow.Nanosecond {
		return sel, ioerr.New(ErrColumn, source, nil, "unknown time unit %d", spec.TimeUnit)
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	pickable := withPartitionKeys(names, parts)
	views := [2]View{}
	for v, selectors := range [][]string{spec.X, spec.Y} {
		expanded, err := Expand(source, pickable, selectors)
		if err != nil {
			return sel, err
		}
		for _, name := range expanded {
			c, err := resolve(source, fields, names, parts, name)
			if err != nil {
				return sel, err
			}
			views[v] = append(views[v], c)
		}
	}
	sel.X, sel.Y = views[0], views[1]
	if spec.TimeColumn != "" {
		i, err := findColumn(source, names, spec.TimeColumn)
		if err != nil {
			return sel, err
		}
		sel.Time = &Column{Name: spec.TimeColumn, Field: i, Lo: 0, Hi: 1}
	}
	return sel, nil
}

// resolve resolves one expanded selector: a partition key, a column, or a
// slice of a list column.
func resolve(source string, fields []arrow.Field, names []string, parts []dataset.Partition, name string) (Column, error) {
	if p, ok := partitionValue(parts, name); ok {
		if slices.Contains(names, name) {
			return Column{}, ioerr.New(ErrColumn, source, nil, "column %q is both in the file and a partition key (a %s=… directory)", name, name)
		}
		if !p.Int {
			return Column{}, ioerr.New(ErrColumn, source, nil, "partition key %q has values that are not integers (such as %q); only integer partition keys can be in X or Y", name, p.Value)
		}
		return Column{Name: name, Field: -1, Lo: 0, Hi: 1, Partition: &p}, nil
	}
	i, err := findColumn(source, names, name)
	if err == nil {
		c := Column{Name: name, Field: i, Lo: 0, Hi: 1}
		if t, ok := fields[i].Type.(*arrow.FixedSizeListType); ok && t.Len() >= 1 {
			c.Hi = int(t.Len())
		}
		return c, nil
	}
	sl, ok := parseSlice(name)
	if !ok || !containsName(names, sl.name) {
		return Column{}, err
	}
	if i, err = findColumn(source, names, sl.name); err != nil {
		return Column{}, err
	}
	c := Column{Name: sl.name, Field: i, Slice: true}
	switch t := fields[i].Type.(type) {
	case nil:
		return c, ioerr.New(ErrColumn, source, nil, "column %q is a CSV number: a slice [%s] needs a fixed-size list (Parquet or Arrow)", sl.name, sl.text())
	case *arrow.FixedSizeListType:
		if t.Len() < 1 {
			return c, ioerr.New(ErrColumn, source, nil, "column %q is a fixed-size list of size %d, want at least 1", c.Name, t.Len())
		}
		if c.Lo, c.Hi, err = sl.bounds(int(t.Len())); err != nil {
			return c, ioerr.New(ErrColumn, source, nil, "column %q, a fixed-size list of size %d: slice [%s]: %v", c.Name, t.Len(), sl.text(), err)
		}
		return c, nil
	case *arrow.ListType, *arrow.LargeListType, *arrow.ListViewType, *arrow.LargeListViewType:
		return c, VarListError(source, c.Name, t)
	default:
		return c, ioerr.New(ErrColumn, source, nil, "column %q has type %s: a slice [%s] needs a fixed-size list", c.Name, t, sl.text())
	}
}

// VarListError is the error of a selected column that is a list of
// variable size.
func VarListError(source, name string, t arrow.DataType) error {
	return ioerr.New(ErrColumn, source, nil, "column %q is a variable-size list (%s); only numbers and fixed-size lists of numbers can be read (write embeddings as fixed_size_list)", name, t)
}

// withPartitionKeys returns names followed by the partition keys that are
// not among them: the columns a selector can pick.
func withPartitionKeys(names []string, parts []dataset.Partition) []string {
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

// partitionValue returns the value of a partition key: ok is false when
// the input has no such key.
func partitionValue(parts []dataset.Partition, name string) (p dataset.Partition, ok bool) {
	for _, p := range parts {
		if p.Key == name {
			return p, true
		}
	}
	return dataset.Partition{}, false
}

// findColumn returns the index of the only column with the given name.
func findColumn(source string, names []string, name string) (int, error) {
	found, count := -1, 0
	for i, n := range names {
		if n == name {
			if found < 0 {
				found = i
			}
			count++
		}
	}
	switch count {
	case 0:
		return -1, ioerr.New(ErrColumn, source, nil, "no column %q (available: %s)", name, ioerr.QuoteList(names, 50))
	case 1:
		return found, nil
	}
	return -1, ioerr.New(ErrColumn, source, nil, "%d columns are named %q", count, name)
}

// ParseTimeUnit returns the Arrow time unit with the given name: s, ms, us (or
// µs) and ns, or second, millisecond, microsecond and nanosecond (also plural).
func ParseTimeUnit(name string) (arrow.TimeUnit, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "s", "sec", "second", "seconds":
		return arrow.Second, nil
	case "ms", "millisecond", "milliseconds":
		return arrow.Millisecond, nil
	case "us", "µs", "μs", "microsecond", "microseconds":
		return arrow.Microsecond, nil
	case "ns", "nanosecond", "nanoseconds":
		return arrow.Nanosecond, nil
	}
	return arrow.Second, fmt.Errorf("dimeio: unknown time unit %q (want s, ms, us or ns)", name)
}
