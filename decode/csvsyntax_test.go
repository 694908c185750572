package decode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
)

// TestCSVRefusesGoSyntax: strconv.ParseFloat reads Go literals, so 1_000 and
// 0x1p4 were read as 1000 and 16 (issue 13, item 9); a CSV reader takes
// decimal numbers only, and names the row and column of anything else.
func TestCSVRefusesGoSyntax(t *testing.T) {
	dir := t.TempDir()
	opts := decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}}
	for _, text := range []string{"1_000", "0x1p4", " 0X1P-2 ", "1_0.5", "0x.8p1"} {
		path := writeBytes(t, dir, "go.csv", []byte(fmt.Sprintf("a,b\n1,2\n3,4\n5,%s\n", text)))
		_, _, _, _, err := readAll(t, path, nil, opts)
		var ve *decode.ValueError
		if !errors.As(err, &ve) || ve.Column != "b" || ve.Row != 2 {
			t.Errorf("%q: error %v, want a ValueError at column b, row 2", text, err)
			continue
		}
		mustContain(t, err.Error(), path, "is not a decimal number")
	}
	// What CSV writers write still reads.
	path := writeBytes(t, dir, "ok.csv", []byte("a,b\n1e5,-2.5E-3\n+.5, 7.\n1E+300,-0\n"))
	x, y, _, _, err := readAll(t, path, nil, opts)
	if err != nil || len(x) != 3 || x[0] != 1e5 || y[0] != -2.5e-3 || x[1] != 0.5 || y[1] != 7 || x[2] != 1e300 {
		t.Errorf("decimal numbers: %v %v %v", x, y, err)
	}
}
