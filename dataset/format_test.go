package dataset_test

import (
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
)

func TestParseFormat(t *testing.T) {
	for _, f := range []dataset.Format{dataset.Auto, dataset.Parquet, dataset.IPCFile, dataset.IPCStream, dataset.CSV} {
		got, err := dataset.ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	for name, want := range map[string]dataset.Format{
		"PARQUET": dataset.Parquet, "pq": dataset.Parquet, "arrow": dataset.IPCFile, "ipc": dataset.IPCFile,
		"feather": dataset.IPCFile, " arrows ": dataset.IPCStream, "stream": dataset.IPCStream, "Csv": dataset.CSV,
	} {
		if got, err := dataset.ParseFormat(name); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	if _, err := dataset.ParseFormat("xlsx"); err == nil {
		t.Error("ParseFormat(xlsx): no error")
	}
	if s := dataset.Format(9).String(); s != "Format(9)" {
		t.Errorf("Format(9).String() = %q", s)
	}
}

func TestFormatFromPath(t *testing.T) {
	for path, want := range map[string]dataset.Format{
		"a.parquet": dataset.Parquet, "dir.v2/A.PQ": dataset.Parquet, "a.arrow": dataset.IPCFile, "a.ipc": dataset.IPCFile,
		"a.feather": dataset.IPCFile, "a.arrows": dataset.IPCStream, "-": dataset.IPCStream, "a.b.csv": dataset.CSV,
	} {
		if got, err := dataset.FormatFromPath(path); err != nil || got != want {
			t.Errorf("FormatFromPath(%q) = %v, %v, want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"a", "a.txt", "a.csv.gz", "parquet", ".arrow/x"} {
		if _, err := dataset.FormatFromPath(path); err == nil {
			t.Errorf("FormatFromPath(%q): no error", path)
		}
	}
}

func TestParseTimeUnit(t *testing.T) {
	for name, want := range map[string]arrow.TimeUnit{
		"s": arrow.Second, "seconds": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond,
		"µs": arrow.Microsecond, "NS": arrow.Nanosecond, "nanosecond": arrow.Nanosecond,
	} {
		if got, err := columns.ParseTimeUnit(name); err != nil || got != want {
			t.Errorf("ParseTimeUnit(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	if _, err := columns.ParseTimeUnit("h"); err == nil {
		t.Error("ParseTimeUnit(h): no error")
	}
}
