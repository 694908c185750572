package dimebeam

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// TestJobErrorRoundTrip: what TagJobError writes, ReadJobError reads back
// from the text of any error that contains it: the message on one line
// with dimebeam's prefix, whatever its characters, and its kind.
func TestJobErrorRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   error
		msg   string
		input bool
	}{
		{"plain failure", errors.New("disk full"), "dimebeam: disk full", false},
		{"prefix kept once", errors.New("dimebeam: no space"), "dimebeam: no space", false},
		{"usage", vocab.Errorf("2 rows in the input"), "dimebeam: 2 rows in the input", true},
		{"wrapped sentinel", fmt.Errorf("split a.csv: %w: X row 3", stream.ErrInvalidInput), "dimebeam: split a.csv: stream: invalid input: X row 3", true},
		{"reader's sentinel", fmt.Errorf("%w: b.csv: no column \"v\"", decode.ErrColumn), `dimebeam: dimeio: unusable column selection: b.csv: no column "v"`, true},
		{"ranking's sentinel", fmt.Errorf("dimebeam: a.csv: %w: candidate x1 row 4: NaN", rank.ErrInvalidInput), "dimebeam: a.csv: rank: invalid input: candidate x1 row 4: NaN", true},
		{"flattened cause is not the input's", fmt.Errorf("writing its sum: %v", stream.ErrInvalidInput), "dimebeam: writing its sum: stream: invalid input", false},
		{"newlines, quotes, non-ASCII", errors.New("line one\n\tline \"two\" 'q' {}\r\n   σ=½ — 東京 `x`"),
			"dimebeam: line one line \"two\" 'q' {} σ=½ — 東京 `x`", false},
		{"a tag's text in the message", errors.New("{dimebeam-job-error:input:Zm9v}"), "dimebeam: {dimebeam-job-error input:Zm9v}", false},
		{"no secrets", errors.New("reading s3://AKIAKEY:SECRET@bucket/a.parquet"), "dimebeam: reading s3://REDACTED@bucket/a.parquet", false},
	} {
		tagged := TagJobError(c.err)
		if !errors.Is(tagged, c.err) {
			t.Errorf("%s: the tagged error does not wrap the stage's", c.name)
		}
		if vocab.IsUsage(tagged) != c.input {
			t.Errorf("%s: IsUsage of the tagged error %v, want %v", c.name, vocab.IsUsage(tagged), c.input)
		}
		if TagJobError(tagged) != tagged {
			t.Errorf("%s: tagged twice", c.name)
		}
		// The runner reports the stage's error inside text of its own, on
		// several lines.
		runner := fmt.Errorf("job dimebeam-1 failed:\nstage-003 bundle inst007 failed:\n\tDoFn[UID:4, Name: scoreFn] failed:\n%v\n\tat goroutine 12 [running]:\nmain.go:7", tagged)
		for _, err := range []error{tagged, runner} {
			je, ok := ReadJobError(err)
			if !ok {
				t.Errorf("%s: no job error in %q", c.name, err)
				continue
			}
			if je.Msg != c.msg || je.Input != c.input || je.Error() != c.msg || je.Usage() != c.input {
				t.Errorf("%s: read %q (input %v), want %q (input %v)", c.name, je.Msg, je.Input, c.msg, c.input)
			}
			if vocab.IsUsage(je) != c.input {
				t.Errorf("%s: IsUsage %v, want %v", c.name, vocab.IsUsage(je), c.input)
			}
			if strings.ContainsAny(je.Msg, "\r\n") || !strings.HasPrefix(je.Msg, "dimebeam: ") {
				t.Errorf("%s: not one line with the prefix: %q", c.name, je.Msg)
			}
		}
	}
	if TagJobError(nil) != nil {
		t.Error("TagJobError(nil) is not nil")
	}
}

// TestReadJobErrorFirst: of several tags (bundles that failed one after
// the other, or a runner that repeats an error), ReadJobError reads the
// first; text without a tag, or with a damaged one, gives ok false.
func TestReadJobErrorFirst(t *testing.T) {
	first := TagJobError(vocab.Errorf("a.csv: bad value"))
	second := TagJobError(errors.New("writing the output: disk full"))
	err := fmt.Errorf("job failed:\n%v\nalso:\n%v\nrepeated: %v", first, second, first)
	je, ok := ReadJobError(err)
	if !ok || je.Msg != "dimebeam: a.csv: bad value" || !je.Input {
		t.Errorf("read %+v, %v; want the first, an input error", je, ok)
	}
	err = fmt.Errorf("job failed:\n%v\nalso:\n%v", second, first)
	if je, ok := ReadJobError(err); !ok || je.Msg != "dimebeam: writing the output: disk full" || je.Input {
		t.Errorf("read %+v, %v; want the first, a failure", je, ok)
	}
	for _, err := range []error{
		nil,
		errors.New("rpc error: code = Unavailable desc = connection refused"),
		errors.New("dimebeam: stream: invalid input: a message without its tag"),
		errors.New("{dimebeam-job-error:input:not base64!}"),
		errors.New("{dimebeam-job-error:other:Zm9v}"),
		errors.New("{dimebeam-job-error:input:Zm9v"),
	} {
		if je, ok := ReadJobError(err); ok || je != nil {
			t.Errorf("%v: read %+v", err, je)
		}
	}
}
