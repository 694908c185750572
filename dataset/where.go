package dataset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dime-project/dime/internal/ioerr"
)

// Condition is a condition on a hive partition key, such as date>=2026-11-01.
// Options.Where keeps the files whose partitions meet all its conditions.
type Condition struct {
	// Key is the partition key.
	Key string
	// Op is one of = != < <= > >=.
	Op string
	// Value is compared with the file's value: as a 64-bit integer when the
	// key is an integer key (see PartitionKey), else as a string (byte by
	// byte, so that ISO dates compare in time order).
	Value string
}

func (c Condition) String() string { return c.Key + c.Op + c.Value }

// whereOps are the operators, longest first so that <= is not read as <.
var whereOps = []string{"!=", "<=", ">=", "==", "=", "<", ">"}

// ParseWhere parses conditions on partition keys separated by commas (all
// must hold), e.g. "region=eu,date>=2026-11-01". The operators are = (or
// ==), !=, <, <=, > and >=; spaces around keys and values are ignored. A
// value cannot contain a comma.
func ParseWhere(s string) ([]Condition, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var conds []Condition
	for _, term := range strings.Split(s, ",") {
		c, err := parseCondition(term)
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	return conds, nil
}

func parseCondition(term string) (Condition, error) {
	best := -1
	var op string
	for _, o := range whereOps {
		if i := strings.Index(term, o); i >= 0 && (best < 0 || i < best || i == best && len(o) > len(op)) {
			best, op = i, o
		}
	}
	if best < 0 {
		return Condition{}, fmt.Errorf("dimeio: where: %q has no operator (want key=value, key!=value, key<value, key<=value, key>value or key>=value)", strings.TrimSpace(term))
	}
	c := Condition{Key: strings.TrimSpace(term[:best]), Op: op, Value: strings.TrimSpace(term[best+len(op):])}
	if c.Op == "==" {
		c.Op = "="
	}
	if c.Key == "" {
		return Condition{}, fmt.Errorf("dimeio: where: %q has no key", strings.TrimSpace(term))
	}
	return c, nil
}

// filter keeps the inputs whose partitions meet every condition.
func (d *Dataset) filter(conds []Condition) error {
	if len(conds) == 0 {
		return nil
	}
	d.Where = conds
	type check struct {
		index int
		isInt bool
		num   int64
		cond  Condition
	}
	checks := make([]check, len(conds))
	for i, c := range conds {
		k := -1
		for j, key := range d.Keys {
			if key.Name == c.Key {
				k = j
			}
		}
		if k < 0 {
			names := make([]string, len(d.Keys))
			for j, key := range d.Keys {
				names[j] = key.Name
			}
			have := "the dataset has no key=value directories"
			if len(names) > 0 {
				have = "partition keys: " + strings.Join(names, ", ")
			}
			return ioerr.New(ErrDataset, "--where", nil, "%q is not a partition key (%s); --where selects files by their partitions only", c.Key, have)
		}
		checks[i] = check{index: k, isInt: d.Keys[k].Int, cond: c}
		if d.Keys[k].Int {
			v, err := strconv.ParseInt(c.Value, 10, 64)
			if err != nil {
				return ioerr.New(ErrDataset, "--where", nil, "%s: partition %q holds integers, %q is not one", c, c.Key, c.Value)
			}
			checks[i].num = v
		}
	}
	kept := d.Inputs[:0]
	for _, in := range d.Inputs {
		ok := true
		for _, ch := range checks {
			p := in.Partitions[ch.index]
			if p.Null { // like SQL: a null meets no condition
				ok = false
				break
			}
			var cmp int
			if ch.isInt {
				v, _ := strconv.ParseInt(p.Value, 10, 64)
				cmp = compare(v, ch.num)
			} else {
				cmp = strings.Compare(p.Value, ch.cond.Value)
			}
			if !holds(ch.cond.Op, cmp) {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, in)
		}
	}
	n := len(d.Inputs)
	d.Inputs = kept
	if len(kept) == 0 {
		return ioerr.New(ErrDataset, "--where", nil, "none of the %d files meets %s", n, whereString(conds))
	}
	return nil
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func holds(op string, cmp int) bool {
	switch op {
	case "=":
		return cmp == 0
	case "!=":
		return cmp != 0
	case "<":
		return cmp < 0
	case "<=":
		return cmp <= 0
	case ">":
		return cmp > 0
	}
	return cmp >= 0 // ">="
}

func whereString(conds []Condition) string {
	s := make([]string, len(conds))
	for i, c := range conds {
		s[i] = c.String()
	}
	return strings.Join(s, ",")
}
