package dimebeam

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&writeFn{})
}

// WriteFile writes the one []byte element of col to a file through Beam's
// filesystem registry (a local path, gs://… or s3://…, for the filesystems
// the program imports). A local file is written to a temporary file in the
// same directory and renamed, so that a reader never sees half of it;
// object stores commit an object when it is closed.
func WriteFile(s beam.Scope, col beam.PCollection, path string) {
	s = s.Scope("dimebeam.WriteFile")
	beam.ParDo0(s, &writeFn{Path: path}, col)
}

// writeFn writes each element to Path (there is one).
type writeFn struct{ Path string }

func (f *writeFn) ProcessElement(ctx context.Context, data []byte) error {
	return writeFile(ctx, f.Path, data)
}

// writeFile writes data to path atomically where the filesystem can rename.
func writeFile(ctx context.Context, name string, data []byte) error {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return fmt.Errorf("dimebeam: %s: %v", name, err)
	}
	defer fs.Close()
	dst := name
	rn, canRename := fs.(filesystem.Renamer)
	if canRename {
		dst = tempName(name)
	}
	if err := filesystem.Write(ctx, fs, dst, data); err != nil {
		removeQuietly(ctx, fs, dst)
		return fmt.Errorf("dimebeam: writing %s: %v", name, err)
	}
	if canRename {
		if err := rn.Rename(ctx, dst, name); err != nil {
			removeQuietly(ctx, fs, dst)
			return fmt.Errorf("dimebeam: writing %s: %v", name, err)
		}
	}
	return nil
}

// tempName returns a hidden name next to name, unique to this process and
// moment.
func tempName(name string) string {
	dir, base := filepath.Split(name)
	if strings.Contains(name, "://") {
		dir, base = path.Split(name)
	}
	return dir + "." + base + fmt.Sprintf(".tmp-%016x", rand.Uint64())
}

func removeQuietly(ctx context.Context, fs filesystem.Interface, name string) {
	if rm, ok := fs.(filesystem.Remover); ok {
		rm.Remove(ctx, name)
	}
}
