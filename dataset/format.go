package dataset

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Format is a file format. The zero value, Auto, means "tell from the path".
type Format uint8

const (
	// Auto picks the format from the file extension (see FormatFromPath).
	Auto Format = iota
	// Parquet is an Apache Parquet file (.parquet, .pq).
	Parquet
	// IPCFile is an Arrow IPC file, also called Feather v2 (.arrow, .ipc,
	// .feather).
	IPCFile
	// IPCStream is an Arrow IPC stream (.arrows, and "-" for stdin).
	IPCStream
	// CSV is comma-separated text with a header row (.csv).
	CSV
)

var formatNames = [...]string{Auto: "auto", Parquet: "parquet", IPCFile: "ipc-file", IPCStream: "ipc-stream", CSV: "csv"}

// formatAliases are the other names ParseFormat accepts.
var formatAliases = map[string]Format{
	"pq": Parquet, "arrow": IPCFile, "ipc": IPCFile, "feather": IPCFile, "file": IPCFile,
	"arrows": IPCStream, "stream": IPCStream,
}

// String returns the format's name as ParseFormat accepts it: auto, parquet,
// ipc-file, ipc-stream or csv.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat returns the format with the given name, case-insensitive: a name
// String returns, or one of the aliases pq (Parquet); arrow, ipc, feather, file
// (IPCFile); arrows, stream (IPCStream).
func ParseFormat(name string) (Format, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	for i, n := range formatNames {
		if s == n {
			return Format(i), nil
		}
	}
	if f, ok := formatAliases[s]; ok {
		return f, nil
	}
	return Auto, fmt.Errorf("dimeio: unknown format %q (want auto, parquet, ipc-file, ipc-stream or csv)", name)
}

// FormatFromPath returns the format that the path's extension names
// (case-insensitive): .parquet and .pq are Parquet; .arrow, .ipc and .feather
// are IPCFile; .arrows is IPCStream; .csv is CSV. The path "-" (stdin) is
// IPCStream.
func FormatFromPath(path string) (Format, error) {
	if path == "-" {
		return IPCStream, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".parquet", ".pq":
		return Parquet, nil
	case ".arrow", ".ipc", ".feather":
		return IPCFile, nil
	case ".arrows":
		return IPCStream, nil
	case ".csv":
		return CSV, nil
	}
	return Auto, fmt.Errorf("dimeio: %s: cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv); name the format explicitly", path)
}
