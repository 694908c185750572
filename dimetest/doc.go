// Package dimetest and its subpackages are test support shared by the dime
// module and the Beam module (github.com/dime-project/dime/beam), which may
// not import the other module's internal packages: s3test runs a real
// S3-protocol server on loopback, planted plants credentials where a
// command could print them. They import package testing and are meant for
// tests only; their API follows the tests' needs, not a compatibility
// promise.
package dimetest
