//go:build !dimefuzz

package io

// The bucket openers of gocloud.dev for the URL schemes in schemes. They are
// left out of builds with the tag dimefuzz, which the fuzzers use (see
// fuzz_test.go): go test -fuzz instruments every package of the test binary
// for coverage, and these bring in the cloud SDKs, a thousand packages.
import (
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	_ "gocloud.dev/blob/gcsblob"   // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
)
