package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
)

func runGen(e *env, args []string) error {
	fs := newFlagSet(e, "gen", "--kind KIND --out FILE|DIR [--files N] [flags]")
	kindName := fs.String("kind", "gaussian", "gaussian (the paper's toy), sine, circle, square, units; independent views: independent, student-t, discrete, mixed-widths, units-null; people: a table in real units (age, income, spend, visits, height); screen: a target y and --dim candidates x00, ... (default 40), six of them dependent on y")
	dim := fs.Int("dim", 20, "columns per view")
	mi := fs.Float64("mi", 2, "true mutual information in nats (gaussian only)")
	noise := fs.Float64("noise", 0.2, "noise standard deviation (sine, circle and square)")
	rows := fs.Int64("rows", 10000, "rows to write")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("out", "", "output file: .parquet, .arrow (IPC file), .arrows (IPC stream) or .csv; - for an IPC stream on stdout")
	format := fs.String("format", "", "output format (default: from the extension; parquet with --files)")
	files := fs.Int("files", 0, "write a hive-partitioned dataset of this many files to the directory --out: DIR/part=00000/part-00000.parquet, … (rows split evenly, in order)")
	progressMode := fs.String("progress", "auto", "progress on stderr: auto, always or never")
	force := fs.Bool("force", false, "let --out write through a symbolic link, FIFO or device (as the shell's > would)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("gen takes no arguments, got %q (use --out)", pos[0])
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if strings.EqualFold(*kindName, "screen") {
		n := defaultScreenCandidates
		if explicit["dim"] {
			n = *dim
		}
		return genScreen(e, *out, *format, *rows, *seed, *force, *progressMode, n)
	}
	if strings.EqualFold(*kindName, "people") {
		for _, name := range []string{"dim", "mi", "noise", "files"} {
			if explicit[name] {
				return usagef("--%s does not apply to --kind people (its columns are age, income, spend, visits, height)", name)
			}
		}
		return genPeople(e, *out, *format, *rows, *seed, *force, *progressMode)
	}
	kind, err := synth.ParseKind(*kindName)
	if err != nil {
		return usagef("--kind %q: want one of %s, people", *kindName, strings.Join(synth.KindNames(), ", "))
	}
	switch {
	case *out == "":
		return usagef("--out is required: a file, or - for stdout")
	case *rows < 1:
		return usagef("--rows %d: want at least 1", *rows)
	case *dim < 1 || *dim > 1<<16:
		return usagef("--dim %d: want 1 to 65536", *dim)
	case explicit["mi"] && kind != synth.Gaussian:
		return usagef("--mi applies to --kind gaussian only (sine, circle and square take --noise)")
	case math.IsNaN(*mi) || *mi < 0:
		return usagef("--mi %v: want a value >= 0", *mi)
	}
	if kind != synth.Gaussian {
		*mi = 0
	}
	spec := synth.Spec{Kind: kind, Dim: *dim, MI: *mi, Noise: *noise, Seed: *seed}
	src, err := synth.NewStream(spec)
	if err != nil {
		return err
	}
	f := dataset.Auto
	if *format != "" {
		if f, err = dataset.ParseFormat(*format); err != nil {
			return usagef("--format %q: want parquet, ipc-file, ipc-stream or csv", *format)
		}
	}
	columns := append(tablewriter.ColumnNames("x", *dim), tablewriter.ColumnNames("y", *dim)...)
	p := newProgress(e, *progressMode, "gen", *rows)
	if explicit["files"] {
		if err := genDataset(src, *out, *files, f, columns, *rows, *dim, p); err != nil {
			return err
		}
		p.done()
		fmt.Fprintf(e.stderr, "wrote %d rows of %v data (%d columns per view) to %d files in %s\n", *rows, kind, *dim, *files, *out)
		return nil
	}
	switch {
	case f != dataset.Auto:
	case *out == "-":
		f = dataset.IPCStream
	default:
		if f, err = dataset.FormatFromPath(*out); err != nil {
			return usagef("--out %s: cannot tell the format from the extension (want .parquet, .arrow, .arrows or .csv); give --format", *out)
		}
	}
	dst, err := newOutput(e, "--out", *out, *force)
	if err != nil {
		return err
	}
	err = dst.write(func(sink io.Writer) error {
		w, err := tablewriter.New(sink, f, columns, tablewriter.Options{})
		if err != nil {
			return asUsage(err)
		}
		err = genRows(src, w, *dim, *rows, 0, p)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", *out, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.done()
	if *out != "-" {
		fmt.Fprintf(e.stderr, "wrote %d rows of %v data (%d columns per view) to %s\n", *rows, kind, *dim, *out)
	}
	return nil
}

// genPeople writes rows of synth.People, a table in real units.
func genPeople(e *env, out, format string, rows int64, seed uint64, force bool, progressMode string) error {
	if err := checkGenOut(out, rows); err != nil {
		return err
	}
	src := synth.NewPeople(seed)
	if err := genTable(e, out, format, rows, force, progressMode, synth.PeopleColumns, func(t []float64) { src.Fill(t) }); err != nil {
		return err
	}
	if out != "-" {
		fmt.Fprintf(e.stderr, "wrote %d rows of people (%s) to %s\n", rows, strings.Join(synth.PeopleColumns, ", "), out)
	}
	return nil
}

// checkGenOut checks --out and --rows of a generated table.
func checkGenOut(out string, rows int64) error {
	switch {
	case out == "":
		return usagef("--out is required: a file, or - for stdout")
	case rows < 1:
		return usagef("--rows %d: want at least 1", rows)
	}
	return nil
}

// genTable writes rows of a table of the given columns to out (in format,
// or the one its extension names; - is an Arrow IPC stream on stdout),
// fill writing each block of rows, row-major.
func genTable(e *env, out, format string, rows int64, force bool, progressMode string, cols []string, fill func(table []float64)) error {
	f := dataset.Auto
	var err error
	switch {
	case format != "":
		if f, err = dataset.ParseFormat(format); err != nil {
			return usagef("--format %q: want parquet, ipc-file, ipc-stream or csv", format)
		}
	case out == "-":
		f = dataset.IPCStream
	default:
		if f, err = dataset.FormatFromPath(out); err != nil {
			return usagef("--out %s: cannot tell the format from the extension (want .parquet, .arrow, .arrows or .csv); give --format", out)
		}
	}
	dst, err := newOutput(e, "--out", out, force)
	if err != nil {
		return err
	}
	p := newProgress(e, progressMode, "gen", rows)
	w := len(cols)
	err = dst.write(func(sink io.Writer) error {
		tw, err := tablewriter.New(sink, f, cols, tablewriter.Options{})
		if err != nil {
			return asUsage(err)
		}
		table := make([]float64, 4096*w)
		for done := int64(0); done < rows && err == nil; {
			b := int(min(4096, rows-done))
			fill(table[:b*w])
			err = tw.Write(table[:b*w], b)
			done += int64(b)
			p.update(done)
		}
		if cerr := tw.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.done()
	return nil
}

// genRows writes n rows of the stream to w, counting in p from the from
// rows written before.
func genRows(src *synth.Stream, w *tablewriter.Writer, d int, n, from int64, p *progress) error {
	const block = 4096
	x, y := make([]float64, block*d), make([]float64, block*d)
	table := make([]float64, block*2*d)
	for done := int64(0); done < n; {
		b := int(min(int64(block), n-done))
		src.Fill(x[:b*d], y[:b*d])
		for i := 0; i < b; i++ {
			copy(table[i*2*d:], x[i*d:(i+1)*d])
			copy(table[i*2*d+d:], y[i*d:(i+1)*d])
		}
		if err := w.Write(table[:b*2*d], b); err != nil {
			return err
		}
		done += int64(b)
		p.update(from + done)
	}
	return nil
}

// genDataset writes the rows as a hive-partitioned dataset of n files in the
// new directory dir: dir/part=00000/part-00000.parquet, … The partition
// values are zero-padded so that the files sort in the order of their rows
// (a dataset is read sorted by path), and part is an integer partition key
// that --where and --x/--y can use. Nothing is left of dir on an error.
func genDataset(src *synth.Stream, dir string, n int, f dataset.Format, columns []string, rows int64, d int, p *progress) error {
	switch {
	case n < 1 || n > 100000:
		return usagef("--files %d: want 1 to 100000", n)
	case int64(n) > rows:
		return usagef("--files %d: more files than the %d rows", n, rows)
	case dir == "-":
		return usagef("--files writes a directory: give --out DIR, not -")
	}
	if f == dataset.Auto {
		f = dataset.Parquet
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usagef("--out %s: the directory exists and is not empty; gen --files writes a new dataset and overwrites nothing", dir)
	} else if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return usagef("--out %s: %v", dir, err)
	}
	created := false
	if _, err := os.Stat(dir); errors.Is(err, iofs.ErrNotExist) {
		created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--out %s: %v", dir, err)
	}
	fail := func(err error) error {
		if created {
			os.RemoveAll(dir)
		} else { // the directory was empty: empty it again
			entries, _ := os.ReadDir(dir)
			for _, en := range entries {
				os.RemoveAll(filepath.Join(dir, en.Name()))
			}
		}
		return err
	}
	ext := map[dataset.Format]string{dataset.Parquet: ".parquet", dataset.IPCFile: ".arrow", dataset.IPCStream: ".arrows", dataset.CSV: ".csv"}[f]
	// SIGINT and SIGTERM end the writing between two files, and what was
	// written is removed: no partial dataset is left.
	sigs := notifySignals()
	defer sigs.stop()
	var done int64
	for k := 0; k < n; k++ {
		select {
		case <-sigs.Done():
			return fail(sigs.err("nothing: the files written were removed"))
		default:
		}
		count := rows / int64(n)
		if int64(k) < rows%int64(n) {
			count++
		}
		part := filepath.Join(dir, fmt.Sprintf("part=%05d", k))
		if err := os.Mkdir(part, 0o755); err != nil {
			return fail(fmt.Errorf("writing %s: %w", part, err))
		}
		path := filepath.Join(part, fmt.Sprintf("part-%05d%s", k, ext))
		w, err := tablewriter.Create(path, f, columns, tablewriter.Options{})
		if err != nil {
			return fail(err)
		}
		if err := genRows(src, w, d, count, done, p); err != nil {
			w.Close()
			return fail(fmt.Errorf("writing %s: %w", path, err))
		}
		if err := w.Close(); err != nil {
			return fail(fmt.Errorf("writing %s: %w", path, err))
		}
		done += count
	}
	return nil
}
