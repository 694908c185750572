// Package planted plants credentials where a command could print them: in
// the URLs of objects on the loopback S3 server (s3test) and in the
// environment of an Azure endpoint. A test then checks that no output,
// message or written file of the command holds Mark.
package planted

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/dimetest"
	"github.com/dime-project/dime/dimetest/s3test"
)

// Mark is in every planted secret, and in nothing else.
const Mark = "PLANTED"

// UserInfo returns the URL of an object on srv with credentials in its user
// information: s3://KEY:SECRET@bucket/key?….
func UserInfo(srv *s3test.Server, bucket, key string) string {
	return "s3://AKIAPLANTEDKEY:PLANTEDSECRET@" + bucket + "/" + key + "?" + srv.Params()
}

// SAS returns the URL of an object on srv with a SAS-style signature in its
// query (sig=…).
func SAS(srv *s3test.Server, bucket, key string) string {
	return srv.URL(bucket, key) + "&sig=PLANTEDSIG"
}

// Signed returns the URL of an object on srv with the query of an S3 signed
// URL (X-Amz-Credential=…&X-Amz-Signature=…).
func Signed(srv *s3test.Server, bucket, key string) string {
	return srv.URL(bucket, key) + "&X-Amz-Credential=AKIAPLANTEDCRED%2F20260101&X-Amz-Signature=PLANTEDAMZSIG"
}

// AzureRefused sets the test's environment (t.Setenv) for an Azure storage
// account on a loopback port that refuses connections, with a planted SAS
// token (AZURE_STORAGE_SAS_TOKEN): a read of azblob://… then fails with a
// transport error that quotes the request's URL, token included.
func AzureRefused(t *testing.T) {
	t.Helper()
	addr := dimetest.FreeAddr(t)
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": "devacct", "AZURE_STORAGE_DOMAIN": addr, "AZURE_STORAGE_PROTOCOL": "http",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR": "true", "AZURE_STORAGE_SAS_TOKEN": "sv=2024-01-01&se=2030-01-01&sp=r&sig=PLANTEDENVSIG%2B",
	} {
		t.Setenv(k, v)
	}
}

// CheckFiles fails the test if a file under dir holds Mark, and returns the
// number of files it read.
func CheckFiles(t *testing.T, dir string) int {
	t.Helper()
	var files int
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
		} else if strings.Contains(string(b), Mark) {
			t.Errorf("%s holds a planted secret", path)
		}
		return nil
	})
	return files
}
