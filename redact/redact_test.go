package redact

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	t.Setenv("AZURE_STORAGE_SAS_TOKEN", "sv=2024-01-01&se=2030-01-01&sp=r&sig=PLANTEDsasSIG%2Bx")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "PLANTEDawsSECRET")
	for _, c := range []struct{ in, want string }{
		{"s3://AKIAKEY:PLANTEDsecret@bucket/dir/a.parquet?region=eu-west-1", "s3://REDACTED@bucket/dir/a.parquet?region=eu-west-1"},
		{`Get "https://acct.blob.core.windows.net/c/k?se=2030-01-01&sig=PLANTEDsasSIG%2Bx&sp=r": dial tcp`, `Get "https://acct.blob.core.windows.net/c/k?se=2030-01-01&sig=REDACTED&sp=r": dial tcp`},
		{"https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F2026&X-Amz-Signature=PLANTEDabc&X-Amz-Expires=60", "https://b.s3.amazonaws.com/k?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Expires=60"},
		{"gs://bucket/k?access_token=PLANTEDya29", "gs://bucket/k?access_token=REDACTED"},
		{"the key PLANTEDawsSECRET leaked", "the key REDACTED leaked"},
		{"s3://bucket/key?region=us-east-1&endpoint=http%3A%2F%2F127.0.0.1%3A9000", "s3://bucket/key?region=us-east-1&endpoint=http%3A%2F%2F127.0.0.1%3A9000"},
		{"dimeio: /data/monkey=1/a.parquet: not found", "dimeio: /data/monkey=1/a.parquet: not found"},
		{`--where "key=1,token=2": no such key`, `--where "key=1,token=2": no such key`},
		{"?sv=1&sig=abc", "?sv=1&sig=REDACTED"},
		{"no column \"a\x1b[31mred\" in b\tc.csv", `no column "a\x1b[31mred" in b\x09c.csv`},
	} {
		got := String(c.in)
		if got != c.want || strings.Contains(got, "PLANTED") {
			t.Errorf("String(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
