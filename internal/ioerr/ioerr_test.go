package ioerr

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// An error of the storage wins over the errors about the bytes that it
// causes, however deep in their causes (wrapped with %w by a decoder, or in
// a tree of errors.Join); an I/O error of the operating system wins over
// ErrFormat only (not a PathError of another cause: "negative offset"); other
// causes stay causes.
func TestStorageErrorWins(t *testing.T) {
	gone := Storage("s3://b/k", errors.New("NoSuchKey"), "reading: the object is gone")
	for _, cause := range []error{
		gone,
		fmt.Errorf("parquet: could not read footer: %w", gone),
		errors.Join(errors.New("other"), fmt.Errorf("x: %w", gone)),
		New(ErrFormat, "s3://b/k", gone, "inner"),
	} {
		for _, kind := range []error{ErrFormat, ErrDataset, ErrColumn} {
			err := New(kind, "s3://b/k", cause, "not a Parquet file")
			if err != gone || !errors.Is(err, ErrDataset) || errors.Is(err, ErrFormat) {
				t.Errorf("%v with cause %q: %q, want the storage error", kind, cause, err)
			}
		}
	}
	pe := &fs.PathError{Op: "read", Path: "/d/a.parquet", Err: syscall.EIO}
	err := New(ErrFormat, "/d/a.parquet", fmt.Errorf("could not read footer: %w", pe), "not a Parquet file")
	if errors.Is(err, ErrFormat) || !errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), "Parquet") {
		t.Errorf("EIO: %q, want the I/O error", err)
	}
	if err := New(ErrDataset, "/d", pe, "cannot list"); !errors.Is(err, ErrDataset) || !strings.Contains(err.Error(), "cannot list") {
		t.Errorf("a dataset error with an I/O cause: %q, want it kept", err)
	}
	for _, cause := range []error{errors.New("magic bytes not found"), &fs.PathError{Op: "readat", Path: "/d/a", Err: errors.New("negative offset")}} {
		if err := New(ErrFormat, "/d/a", cause, "not a Parquet file"); !errors.Is(err, ErrFormat) {
			t.Errorf("a format error: %q, want ErrFormat", err)
		}
	}
}
