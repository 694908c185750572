package dimebeam

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/vocab"
)

// TestReadOptionsJSON checks that a Config's reader options travel to the
// workers (Beam encodes a DoFn's fields as JSON) whole but for the
// functions and the allocator, which are left to their defaults.
func TestReadOptionsJSON(t *testing.T) {
	where, err := dataset.ParseWhere("region=eu,date>=2026-11-01")
	if err != nil {
		t.Fatal(err)
	}
	want := decode.Options{
		Files:     dataset.Options{Format: dataset.CSV, Where: where, StallTimeout: time.Minute},
		Columns:   columns.Spec{X: []string{"a", "b"}, Y: []string{"c"}, TimeColumn: "t"},
		Values:    decode.Values{SkipInvalid: true, MaxAbs: vocab.MaxAbsValue},
		BatchSize: 77,
		Strict:    true,
		Comma:     ';',
		Prefetch:  true,
		Limit:     1000,
		Workers:   3,
	}
	given := want
	given.Files.Listing = func(string, int, bool) {} // Files.OpenBucket is a function too
	given.Allocator = memory.NewGoAllocator()
	given.Selected = &columns.Selection{} // one input's: not for the workers
	cfg := testConfig()
	cfg.Read = NewReadOptions(given)
	b, err := json.Marshal(&scoreFn{Cfg: cfg})
	if err != nil {
		t.Fatal(err)
	}
	var got scoreFn
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Cfg.Read.Options(), want) {
		t.Errorf("the reader options after JSON:\n%+v\nwant\n%+v", got.Cfg.Read.Options(), want)
	}
	cfg.Read = NewReadOptions(want)
	if !reflect.DeepEqual(got.Cfg, cfg) {
		t.Errorf("the config after JSON:\n%+v\nwant\n%+v", got.Cfg, cfg)
	}
}
