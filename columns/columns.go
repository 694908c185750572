package columns

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

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
