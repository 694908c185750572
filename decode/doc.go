// Package decode reads the two views X and Y of a dataset from Parquet,
// Arrow IPC and CSV files, block by block in constant memory. Its contract:
//
//   - Every reader is a BlockReader: Next, the current block of each view
//     (X, Y, row-major float64, and Times), the counts, Columns, Warnings,
//     Err, Close. Open reads one file (or stdin), OpenInput and
//     OpenRowGroups one input of a resolved dataset, OpenDataset and
//     NewDatasetReader a dataset of many files as one table.
//   - A reader is opened with a context.Context and honours it: once the
//     context is done, Next returns false and Err returns its error.
//   - The same rows give the same blocks, bit for bit, whatever the files,
//     row groups, record batches and number of decoding goroutines.
//   - Bad input never panics: errors are one line naming the file, and the
//     column and row where there is one, and match ErrFormat, ErrColumn,
//     ErrDataset or ErrInvalidValue (a *ValueError).
//   - Memory depends on Options.BatchSize and the width of the views, not
//     on the number of rows or files.
//
// It is the top of four rooms: package dataset turns arguments (paths,
// directories, globs, object-storage URLs, --where conditions on hive
// partitions) into a list of inputs and opens their bytes; package columns
// resolves the selectors of the views against an input's schema, once, into
// a columns.Selection; this package decodes the bytes into Arrow record
// batches and copies the selected columns into blocks; package tablewriter
// writes tables in the same formats. The workarounds of Arrow Go v15's bugs
// are in internal/arrowfix.
//
//	r, err := decode.Open(ctx, "data.parquet", os.Stdin, decode.Options{
//		Columns: columns.Spec{X: []string{"age", "income"}, Y: []string{"embedding"}}})
//	if err != nil { … }
//	defer r.Close()
//	for r.Next() {
//		x, y := r.X(), r.Y() // r.Rows()×r.DimX() and r.Rows()×r.DimY()
//	}
//	if err := r.Err(); err != nil { … }
//
// A block is valid until the next call to Next, whose buffers it reuses, and
// each record batch is released when the next is read. The lower layer is
// public: an Extractor copies the selected columns of any arrow.Record (from
// memory, Flight, …) into a Block with the same checks.
//
// # Datasets
//
// OpenDataset resolves its arguments with dataset.Resolve and reads the
// files in path order as one table:
//
//	r, err := decode.OpenDataset(ctx, []string{"s3://lake/events/"}, nil, decode.Options{
//		Columns: columns.Spec{X: []string{"age", "income"}, Y: []string{"embedding"}}})
//
// The files must agree on the types of the selected columns (a mismatch is
// an error naming both files and the column, matching ErrDataset); other
// columns may differ.
//
// A DatasetReader decodes ahead on Options.Workers goroutines (GOMAXPROCS,
// at most 4, by default) across files and Parquet row groups: a Parquet file
// whose footer lists several row groups is cut into ranges of at least four
// batches, decoded in parallel. At most Workers + 2 blocks are in flight,
// and one file is open per worker, whatever the number of files. The rows
// are handed over in dataset order in blocks of exactly Options.BatchSize
// kept rows (fewer for rows so wide that a block would hold more than
// MaxBlockBytes of values; the last one shorter), whatever the files, row groups, record
// batches and number of workers: the blocks, and so the estimates of
// package stream, are the same bit for bit from one file or from a
// directory of parts holding the same rows. TotalRows is the sum of the
// Parquet footers' row counts (read by OpenDataset, in parallel), and
// FilesDone the files read to their end, for progress. Options.Limit ends
// the reading after so many rows.
//
// The pieces are public, for distributed runners: dataset.Resolve lists the inputs
// (Input: path or URL, size, format, partition values), Dataset.ReadFooters
// adds the Parquet row counts and row groups, and OpenInput opens one input,
// OpenRowGroups a range of row groups of one Parquet input, as a Reader.
// An Input is plain data (it marshals to JSON) and needs nothing of the
// process that resolved it.
//
// ReadPilot reads a dataset's pilot, the rows on which the commands choose
// the columns' scales and data-dependent bandwidths: a seeded uniform
// sample of a Parquet dataset's rows (PilotIndices; only the row groups
// holding chosen rows are read), the first rows of CSV and IPC files, and
// nothing of a stream (the caller's one reading holds its first rows).
//
// # Formats
//
// Options.Files.Format, or else the file extension, says how to read a file:
//
//	Parquet    .parquet .pq              read with parquet/pqarrow, only the
//	                                     selected columns, BatchSize rows at
//	                                     a time, pages through a 64 KiB buffer
//	IPCFile    .arrow .ipc .feather      Arrow IPC file (Feather v2), read in
//	                                     order
//	IPCStream  .arrows, and "-" (stdin)  Arrow IPC stream
//	CSV        .csv                      text with a header row
//
// Stdin (the path "-") is read as an IPC stream, or as CSV if Options.Format
// says so; Parquet and IPC files need random access and cannot come from
// stdin. Reader.TotalRows gives the number of rows of a Parquet file from its
// metadata (for a progress bar), and -1 for the other formats.
//
// CSV is read by arrow/csv in chunks of BatchSize rows, with the selected
// columns declared as text and parsed here with strconv.ParseFloat (spaces
// around a number are ignored). Type inference is not used: it looks at the
// first row only, so a column of integers with a decimal further down, or an
// empty first cell, would fail; and a text that is not a number is reported
// with its column and row, which arrow/csv does not do. Columns not selected
// are not converted. The texts of pandas' read_csv for a missing value ("",
// NA, N/A, NULL, null, None, #N/A, nan, …) are nulls; any other text that is
// not a number is an error even with SkipInvalid, as it suggests a wrong
// column rather than a missing value. A UTF-8 byte-order mark is skipped;
// Options.Comma sets another delimiter (e.g. '\t').
//
// # Invalid values
//
// A null (including a null list or a null list element), a NaN or an
// infinity in a selected column stops the reading with a *ValueError naming
// the file, the column and the row: the 0-based index of the row among all
// rows of the file (for CSV, among the data rows; row r is on line r + 2
// when no field spans lines). With Options.Values.SkipInvalid such a row is instead
// dropped from both views (and from the times) and counted by Skipped.
//
// # Times
//
// Options.Columns.TimeColumn names a column of times for monitoring: an Arrow
// timestamp of any unit and time zone, or an integer count of
// Options.Columns.TimeUnit (seconds by default) since the Unix epoch. In CSV the
// column holds integers in TimeUnit or dates and times such as
// 2006-01-02T15:04:05.999Z (UTC unless a zone is given). Reader.Times gives
// the times of the block's rows in nanoseconds since the Unix epoch, UTC; a
// null time, or one outside the years 1678 to 2262 that int64 nanoseconds
// can hold, makes the row invalid.
//
// # Errors
//
// Errors are one line, prefixed "dimeio: " and the file's path (or "stdin").
// Besides *ValueError (matching ErrInvalidValue), errors.Is matches
// ErrColumn for the column selection and ErrFormat for the bytes: a file of
// 0 bytes, a file that is not in the format its name says, a file cut short.
// An error during the reading names the row where the failing record batch
// starts.
//
// IPC files and streams are read message by message with ipc.Reader, through
// a message reader of this package that reports a stream cut off inside a
// message (ipc's own takes a cut just after a message's length prefix for a
// clean end), accepts only the framing of Arrow 0.15 and later, and checks
// message lengths against the bytes left, so that text or a Parquet file
// given as IPC is a short error rather than a large allocation. A stream cut
// exactly between two messages reads as a shorter stream (the format makes
// the end-of-stream marker optional) with a warning (Reader.Warnings), or
// with Options.Strict an error. Before ipc.Reader sees a message, the
// vectors of its metadata (schema fields, children, key-values, a batch's
// nodes and buffers) are bounded by the bytes that hold them, its buffers by
// its body, and the uncompressed sizes of compressed buffers by their
// compressed size: a corrupt field count used to make Arrow Go v15 allocate
// hundreds of gigabytes. A message body (a record batch) larger than
// MaxRecordBatchBytes (512 MiB) is an error that names its size: a reader
// holds a batch whole, and DatasetReader.HeldBatchBytes counts what its
// workers may hold for the memory check of the dime command. An IPC file is checked for its magic at
// both ends and its messages are read in order up to the footer. Parquet
// columns are read by pqarrow column readers in step, and a file whose
// columns disagree on their number of rows, or with the metadata, is an
// error.
//
// Bytes flipped inside a file that keeps its framing are not all caught:
// Arrow IPC has no checksums, and Arrow Go v15 neither writes nor verifies
// Parquet page CRCs. This package verifies them (pagecrc.go): when the pages
// of a selected column chunk carry a CRC, each page's is checked before its
// row group is read, and a mismatch is an ErrFormat error naming the file,
// row group, column and page. Files without CRCs (Arrow Go's and pyarrow's
// by default) are not protected: most flips in their values change the
// values silently. Flipping single bytes of a small Parquet file, 0.7% of
// the flips made its page or schema decoding panic: those panics are
// recovered at the one boundary where this package calls the decoder, and
// reported as a corrupt file. An IPC record batch that fails to load has
// the buffers Arrow allocated for it freed (ipcalloc.go). No error shows the
// text of a Go runtime error.
//
// # Memory and speed
//
// Extraction is a loop per column and type over the Arrow buffers (minding
// offsets and validity bitmaps), by tiles of 256 rows so that the row-major
// destination stays in cache, without allocating in steady state: 30 to 50
// million rows of 20 values per second on one core. A reader holds one
// record batch, one block, and for Parquet about two pages per selected
// column plus the file's metadata (about 365 bytes per column and row group
// in Arrow Go v15, and ten times more with column statistics, which the
// tablewriter does not write). Reading all of a Parquet file of 10 million
// rows of 20 float64 columns written by a TableWriter runs at about 10
// million rows/s with a peak RSS of about 100 MB (2 cores); see the
// benchmarks. With Options.Prefetch a Reader reads and extracts the next
// block on a goroutine of its own while the caller works on the current one
// (two blocks in memory instead of one; the same blocks, counts and errors),
// so that decoding overlaps computation: dime score uses it. Close stops
// that goroutine. Arrow buffers come from Options.Allocator
// (memory.DefaultAllocator by default); the tests pass a
// memory.CheckedAllocator to prove that nothing leaks. With the default
// allocator, the value and level buffers the Parquet decoder frees after
// each batch are kept in a pool (at most 48 MiB, let go of a second after
// the last Parquet reader is closed) and reused for the next batches
// instead of being left to the garbage collector: it halves the
// collections of dime score and saves 5–9% of its time.
package decode
