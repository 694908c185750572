// Package dataset is the dataset layer: it turns the arguments of a command
// (file paths, directories, globs, object-storage URLs, stdin) and --where
// conditions on hive partitions into a Dataset, an ordered list of Inputs,
// and opens the bytes of one input (Storage.Open). Its contract: the same
// files give the same inputs in the same order whatever the order and
// spelling of the arguments; an Input is plain data (it marshals to JSON)
// and can be opened in another process; errors are one line naming the
// argument or file, matching ErrDataset (the dataset as a whole) or
// ErrFormat (one file's bytes); nothing in a message carries a secret. It
// decodes nothing but Parquet footers (ReadFooters, for row counts and row
// groups): package decode reads the rows.
//
// In a directory, the data files are those with a known extension (or every
// file, with Options.Format); names starting with "." or "_" (_SUCCESS,
// _metadata, _temporary/, hidden files) and .crc files are skipped, as
// Spark and Arrow's datasets skip them. The files of all arguments are
// sorted by path, so that the same files give the same rows in the same
// order on every run. They must all be in one format, and agree on the types
// of the selected columns (a mismatch is an error naming both files and the
// column); other columns may differ. Errors about the dataset as a whole
// match ErrDataset.
//
// Hive partitions: a directory level key=value (date=2026-11-01/region=eu/)
// gives every file below it the partition key and value. A key whose
// non-null values are all integers is an int64 column that X and Y can
// select like any other; Hive's null, __HIVE_DEFAULT_PARTITION__, is a null.
// Options.Where (see ParseWhere: "region=eu,date>=2026-11-01") keeps the
// files whose partitions meet every condition, before any file is opened:
// the others are never read. Values compare as integers for integer keys,
// else as strings, byte by byte (ISO dates in time order).
//
// Object storage goes through gocloud.dev/blob: s3://bucket/prefix/,
// gs://bucket/prefix/, azblob://container/prefix/ and file:///dir/. The
// path after the bucket is a prefix if it ends in "/" (read like a
// directory), a glob if it has glob characters, else an object, or a prefix
// when no object has that key. The query parameters open the bucket as
// gocloud.dev documents them; for S3 (AWS SDK v2) the credentials and the
// region come from the usual environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_PROFILE, ~/.aws), the endpoint
// from AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3), and the URL may add
// region=, endpoint=, use_path_style=true (needed by most S3-compatible
// stores such as MinIO), disable_https=true, profile= and anonymous=true.
// Options.OpenBucket replaces the opener (for other schemes, or buckets
// set up in code). Parquet and Arrow IPC files are read with ranged reads:
// a read continues the ranged GET that ended where it starts, each GET asks
// for at most 8 MiB from its offset, and its body is consumed only as the
// decoder reads it through 64 KiB page buffers, so a Parquet file costs a
// few requests for its footer and about one per column chunk, and is never
// held whole in memory. Streams and CSV are one sequential GET.
package dataset
