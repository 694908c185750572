// Package redact forwards to the public package
// github.com/dime-project/dime/redact, for the packages that still import
// it here; new code imports the public one.
package redact

import "github.com/dime-project/dime/redact"

// Mark replaces a secret (redact.Mark).
const Mark = redact.Mark

// String returns s with its secrets replaced (redact.String).
func String(s string) string { return redact.String(s) }
