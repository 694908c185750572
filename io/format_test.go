package io_test

import (
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	dimeio "github.com/dime-project/dime/io"
)

func TestParseFormat(t *testing.T) {
	for _, f := range []dimeio.Format{dimeio.Auto, dimeio.Parquet, dimeio.IPCFile, dimeio.IPCStream, dimeio.CSV} {
		got, err := dimeio.ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	for name, want := range map[string]dimeio.Format{
		"PARQUET": dimeio.Parquet, "pq": dimeio.Parquet, "arrow": dimeio.IPCFile, "ipc": dimeio.IPCFile,
		"feather": dimeio.IPCFile, " arrows ": dimeio.IPCStream, "stream": dimeio.IPCStream, "Csv": dimeio.CSV,
	} {
		if got, err := dimeio.ParseFormat(name); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	if _, err := dimeio.ParseFormat("xlsx"); err == nil {
		t.Error("ParseFormat(xlsx): no error")
	}
	if s := dimeio.Format(9).String(); s != "Format(9)" {
		t.Errorf("Format(9).String() = %q", s)
	}
}

func TestFormatFromPath(t *testing.T) {
	for path, want := range map[string]dimeio.Format{
		"a.parquet": dimeio.Parquet, "dir.v2/A.PQ": dimeio.Parquet, "a.arrow": dimeio.IPCFile, "a.ipc": dimeio.IPCFile,
		"a.feather": dimeio.IPCFile, "a.arrows": dimeio.IPCStream, "-": dimeio.IPCStream, "a.b.csv": dimeio.CSV,
	} {
		if got, err := dimeio.FormatFromPath(path); err != nil || got != want {
			t.Errorf("FormatFromPath(%q) = %v, %v, want %v", path, got, err, want)
		}
	}
	for _, path := range []string{"a", "a.txt", "a.csv.gz", "parquet", ".arrow/x"} {
		if _, err := dimeio.FormatFromPath(path); err == nil {
			t.Errorf("FormatFromPath(%q): no error", path)
		}
	}
}

func TestParseTimeUnit(t *testing.T) {
	for name, want := range map[string]arrow.TimeUnit{
		"s": arrow.Second, "seconds": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond,
		"µs": arrow.Microsecond, "NS": arrow.Nanosecond, "nanosecond": arrow.Nanosecond,
	} {
		if got, err := dimeio.ParseTimeUnit(name); err != nil || got != want {
			t.Errorf("ParseTimeUnit(%q) = %v, %v, want %v", name, got, err, want)
		}
	}
	if _, err := dimeio.ParseTimeUnit("h"); err == nil {
		t.Error("ParseTimeUnit(h): no error")
	}
}
