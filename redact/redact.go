// Package redact removes secrets from text that dime prints: messages,
// reports and the names of inputs. Every message and report that can hold
// a URL or a transport error goes through String.
//
// It replaces with REDACTED:
//   - the user information of a URL (s3://KEY:SECRET@bucket/… becomes
//     s3://REDACTED@bucket/…);
//   - the value of a query parameter that signs or authorizes a request
//     (in a URL, an Azure SAS token, a signed URL of S3 or GCS quoted in a
//     transport error): sig, signature,
//     X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token,
//     X-Goog-Signature, X-Goog-Credential, token, access_token, password,
//     secret, key, and the other names of sensitiveParams;
//   - the value of an environment variable that holds a credential
//     (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AZURE_STORAGE_KEY,
//     AZURE_STORAGE_SAS_TOKEN, …), wherever it appears.
//
// Other parameters (region, endpoint, the SAS token's expiry) are kept:
// they help to tell what failed. Control characters (an escape sequence in
// a column name or a path) are written as \xNN, so that they reach no
// terminal raw.
package redact

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Mark replaces a secret.
const Mark = "REDACTED"

// sensitiveParams are the names (lower case) of parameters whose values are
// secrets.
var sensitiveParams = []string{
	"sig", "signature", "x-amz-signature", "x-amz-credential", "x-amz-security-token",
	"x-goog-signature", "x-goog-credential", "x-goog-security-token",
	"token", "access_token", "id_token", "refresh_token", "sas", "sas_token",
	"password", "passwd", "secret", "secret_key", "secret_access_key", "access_key",
	"awsaccesskeyid", "key", "client_secret", "credential", "credentials",
}

// secretEnv are environment variables whose values are credentials.
var secretEnv = []string{
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID",
	"AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CONNECTION_STRING",
	"AZURE_CLIENT_SECRET", "GOOGLE_OAUTH_ACCESS_TOKEN",
}

var (
	// userinfo matches the user information of a URL: scheme://userinfo@.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s"'<>]+@`)
	// param matches name=value of a sensitive name in a query: after "?"
	// or "&" (or their URL encodings, as in a URL inside a parameter).
	param = regexp.MustCompile(`(?i)([?&]|%26|%3F)(` + alternatives() + `)(=|%3D)[^&\s"'<>;)]*`)
)

func alternatives() string {
	q := make([]string, len(sensitiveParams))
	for i, p := range sensitiveParams {
		q[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(q, "|")
}

// String returns s with its secrets replaced by REDACTED.
func String(s string) string {
	for _, name := range secretEnv {
		// A value short enough to occur by chance is not one to hide.
		if v := os.Getenv(name); len(v) >= 8 {
			s = strings.ReplaceAll(s, v, Mark)
			if t := strings.TrimPrefix(v, "?"); t != v && len(t) >= 8 {
				s = strings.ReplaceAll(s, t, Mark)
			}
		}
	}
	s = userinfo.ReplaceAllString(s, "${1}"+Mark+"@")
	return escapeControls(param.ReplaceAllString(s, "${1}${2}${3}"+Mark))
}

// Controls returns s with its control characters (C0 including tab and
// newline, DEL, C1) written as \xNN, so that a name from a file (a column's,
// a path's) cannot move the cursor, clear a terminal or break a table's
// lines.
func Controls(s string) string { return escapeControls(s) }

// escapeControls writes the control characters of s (C0, DEL, C1) as \xNN.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, "\\x%02x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }
