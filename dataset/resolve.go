package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dime-project/dime/internal/ioerr"
)

// isGlob reports whether s has glob characters.
func isGlob(s string) bool { return strings.ContainsAny(s, "*?[{") }

// hiddenPart reports whether a path element is skipped in a directory: a
// hidden file or directory, or one starting with "_" (_SUCCESS, _metadata,
// _temporary/), as Spark and Arrow's datasets skip them.
func hiddenPart(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// candidate is a file found below the root of an argument.
type candidate struct {
	path string // the path or URL of the file
	rel  string // its path below the root, with "/"
	size int64
}

// selection picks the data files among the candidates of one argument: not
// hidden, matching the glob (a file matches if it or one of its directories
// does), and of a known format (or any file with an explicit format).
type selection struct {
	arg     string
	glob    string // pattern below the root, or ""
	format  Format // explicit format, or Auto
	inputs  []Input
	matched int    // candidates that were not hidden and matched the glob
	other   string // a skipped file of unknown format, for the error
	nother  int
}

func (s *selection) add(c candidate) {
	parts := strings.Split(c.rel, "/")
	for _, p := range parts {
		if hiddenPart(p) {
			return
		}
	}
	if strings.HasSuffix(strings.ToLower(c.rel), ".crc") {
		return
	}
	if s.glob != "" {
		ok := false
		for i := range parts {
			if m, _ := doublestar.Match(s.glob, strings.Join(parts[:i+1], "/")); m {
				ok = true
				break
			}
		}
		if !ok {
			return
		}
	}
	s.matched++
	f := s.format
	if f == Auto {
		var err error
		if f, err = FormatFromPath(c.rel); err != nil {
			if s.other == "" {
				s.other = c.path
			}
			s.nother++
			return
		}
	}
	s.inputs = append(s.inputs, Input{Path: c.path, Size: c.size, Format: f, Rows: -1})
}

// result returns the inputs, or the error of an argument that names none.
func (s *selection) result(what string) ([]Input, error) {
	if len(s.inputs) > 0 {
		return s.inputs, nil
	}
	switch {
	case s.matched == 0 && s.glob != "":
		return nil, ioerr.New(ErrDataset, s.arg, nil, "the glob matches no files")
	case s.matched == 0:
		return nil, ioerr.New(ErrDataset, s.arg, nil, "%s has no data files (hidden files, _SUCCESS, _metadata and .crc files are skipped)", what)
	}
	return nil, ioerr.New(ErrDataset, s.arg, nil, "%s has no data files: %d files of unknown format such as %s (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv, or name the format with --format)",
		what, s.nother, s.other)
}

// resolveLocal returns the data files of a local path, directory or glob.
func resolveLocal(arg string, format Format) ([]Input, error) {
	info, err := os.Stat(arg)
	switch {
	case err == nil && !info.IsDir():
		f := format
		if f == Auto {
			if f, err = FormatFromPath(arg); err != nil {
				return nil, ioerr.New(ErrFormat, arg, nil, "cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv); name the format explicitly")
			}
		}
		size := info.Size()
		if !info.Mode().IsRegular() {
			size = -1 // a pipe or a device: read as a stream
		}
		return []Input{{Path: arg, Size: size, Format: f, Rows: -1}}, nil
	case err == nil:
		s := &selection{arg: arg, format: format}
		if err := walkLocal(arg, s); err != nil {
			return nil, err
		}
		return s.result("the directory")
	case isGlob(arg) && errors.Is(err, fs.ErrNotExist):
		pattern := filepath.ToSlash(filepath.Clean(arg))
		if !doublestar.ValidatePattern(pattern) {
			return nil, ioerr.New(ErrDataset, arg, nil, "bad glob pattern")
		}
		base, glob := doublestar.SplitPattern(pattern)
		s := &selection{arg: arg, glob: glob, format: format}
		root := filepath.FromSlash(base)
		if _, err := os.Stat(root); err != nil {
			return nil, ioerr.New(ErrDataset, arg, nil, "the glob matches no files (%s does not exist)", root)
		}
		if err := walkLocal(root, s); err != nil {
			return nil, err
		}
		return s.result("the glob")
	}
	return nil, fmt.Errorf("dimeio: %w", err)
}

// walkLocal adds the files below root to s. Hidden directories are not
// entered, hidden files not looked at; symbolic links to files are
// followed, to directories not, and dangling links skipped.
func walkLocal(root string, s *selection) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("dimeio: %w", err)
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("dimeio: %w", err)
		}
		if d.IsDir() {
			if hiddenPart(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if hiddenPart(d.Name()) {
			return nil // not data (an editor's .#lock link), and not read
		}
		info, err := os.Stat(p) // follows a link
		if err != nil && d.Type()&fs.ModeSymlink != 0 && errors.Is(err, fs.ErrNotExist) {
			return nil // a dangling link: no file to read
		}
		if err != nil {
			return fmt.Errorf("dimeio: %w", err)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		s.add(candidate{path: p, rel: filepath.ToSlash(rel), size: info.Size()})
		return nil
	})
}
