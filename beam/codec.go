package dimebeam

import (
	"bytes"
	"encoding/gob"

	"github.com/dime-project/dime/stream"
)

// encodeResult and decodeResult are the coder of stream.Result: gob keeps
// every field, NaN included (JSON, Beam's default for structs, refuses NaN,
// and DiMEStdErr is NaN for P = 1).
func encodeResult(r stream.Result) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(r)
	return b.Bytes(), err
}

func decodeResult(b []byte) (stream.Result, error) {
	var r stream.Result
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r)
	return r, err
}
