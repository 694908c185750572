//go:build !dimefuzz

package dataset

// The bucket openers of gocloud.dev for the URL schemes in schemes. They are
// left out of builds with the tag dimefuzz, which the fuzzers use (see
// fuzz_test.go): go test -fuzz instruments every package of the test binary
// for coverage, and these bring in the cloud SDKs, a thousand packages.
import (
	"context"
	"fmt"
	"net/url"
	"strconv"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/fileblob"  // file://
	"gocloud.dev/blob/gcsblob"     // gs://
	_ "gocloud.dev/blob/s3blob"    // s3://
	"gocloud.dev/gcp"
)

func init() { schemeOpeners["gs"] = openGCS }

// openGCS opens a gs:// bucket as gcsblob's default opener does, but for
// missing credentials: that opener prints a warning on standard output
// (where dime's results go) and goes on without credentials; here it is an
// error, unless the URL asks for anonymous access (anonymous=true, or
// access_id=-), which needs none.
func openGCS(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	q := u.Query()
	if anon, _ := strconv.ParseBool(q.Get("anonymous")); anon || q.Get("access_id") == "-" {
		return (&gcsblob.URLOpener{}).OpenBucketURL(ctx, u)
	}
	creds, err := gcp.DefaultCredentials(ctx)
	if err != nil {
		return nil, fmt.Errorf("no Google Cloud credentials (set GOOGLE_APPLICATION_CREDENTIALS, or add ?anonymous=true for a public bucket): %v", err)
	}
	client, err := gcp.NewHTTPClient(gcp.DefaultTransport(), creds.TokenSource)
	if err != nil {
		return nil, err
	}
	return (&gcsblob.URLOpener{Client: client, TokenSource: gcp.CredentialsTokenSource(creds)}).OpenBucketURL(ctx, u)
}
