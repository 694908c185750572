package dataset

import (
	"net/url"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dime-project/dime/internal/ioerr"
)

// hiveNull is the directory value Hive and Spark write for a null partition.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// hiveLevels returns the key=value directory levels of a file's path
// (a local path, or the key of a URL), outermost first. Every directory
// level of the path counts, so that a file has the same partitions whether
// it was named by a directory, a glob or by itself.
func hiveLevels(p string) []Partition {
	var dir string
	if isURL(p) {
		if u, err := url.Parse(p); err == nil {
			dir = path.Dir(u.Path)
		}
	} else {
		dir = filepath.ToSlash(filepath.Dir(p))
	}
	var parts []Partition
	for _, level := range strings.Split(dir, "/") {
		k, v, ok := strings.Cut(level, "=")
		if !ok || k == "" {
			continue
		}
		if uk, err := url.PathUnescape(k); err == nil {
			k = uk
		}
		if v == hiveNull {
			parts = append(parts, Partition{Key: k, Null: true})
			continue
		}
		if uv, err := url.PathUnescape(v); err == nil {
			v = uv
		}
		parts = append(parts, Partition{Key: k, Value: v})
	}
	return parts
}

// partition sets the partitions of the inputs and the keys of the dataset:
// every input must have the same keys in the same order, and a key is an
// integer when all its non-null values are.
func (d *Dataset) partition() error {
	if len(d.Inputs) == 0 || d.Inputs[0].Path == "-" {
		return nil
	}
	first := hiveLevels(d.Inputs[0].Path)
	for i := range d.Inputs {
		in := &d.Inputs[i]
		in.Partitions = hiveLevels(in.Path)
		if !sameKeys(in.Partitions, first) {
			return ioerr.New(ErrDataset, in.Path, nil, "has partition keys (%s) but %s has (%s): the files of a dataset must have the same key=value directory levels",
				keyList(in.Partitions), d.Inputs[0].Path, keyList(first))
		}
	}
	d.Keys = make([]PartitionKey, len(first))
	for k := range first {
		isInt := true
		for _, in := range d.Inputs {
			p := in.Partitions[k]
			if p.Null {
				continue
			}
			if _, err := strconv.ParseInt(p.Value, 10, 64); err != nil {
				isInt = false
				break
			}
		}
		d.Keys[k] = PartitionKey{Name: first[k].Key, Int: isInt}
		for i := range d.Inputs {
			d.Inputs[i].Partitions[k].Int = isInt
		}
	}
	for i, k := range d.Keys {
		for _, other := range d.Keys[:i] {
			if other.Name == k.Name {
				return ioerr.New(ErrDataset, d.Inputs[0].Path, nil, "partition key %q appears twice in the path", k.Name)
			}
		}
	}
	return nil
}

func sameKeys(a, b []Partition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key {
			return false
		}
	}
	return true
}

func keyList(parts []Partition) string {
	keys := make([]string, len(parts))
	for i, p := range parts {
		keys[i] = p.Key
	}
	if len(keys) == 0 {
		return "none"
	}
	return strings.Join(keys, ", ")
}
