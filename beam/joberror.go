package dimebeam

import (
	"encoding/base64"
	"errors"
	"regexp"
	"strings"

	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/outfile"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/redact"
	"github.com/dime-project/dime/vocab"
)

// JobError is the error of a job that failed in one of its stages, as its
// launcher reads it back from the runner (ReadJobError).
//
// A stage's error crosses the runner as text only: the SDK harness sends
// its message to the runner, which reports the job's failure with that
// message somewhere inside text of its own (the failed stage, a stack, the
// errors of other bundles), none of it typed. The stages of this package
// therefore return every error through one writer, TagJobError, which puts
// the error's message and its kind into the text as a tag, and
// ReadJobError is the one reader of that tag: the launcher learns whether
// the input was at fault (exit status 2) or the machine (1) without
// matching any message.
type JobError struct {
	// Msg is the stage's error on one line, beginning with "dimebeam: ".
	Msg string
	// Input says that the error is about the input or the settings (a bad
	// column or value, a dataset whose files do not agree, too few rows):
	// see TagJobError. It is false for a failure of the machine, such as
	// an output or a partial sum that could not be written.
	Input bool
}

func (e *JobError) Error() string { return e.Msg }

// Usage reports whether the error is about the input (vocab.IsUsage).
func (e *JobError) Usage() bool { return e.Input }

// The tag that carries a JobError through the runner's text: the kind and
// the message in unpadded base64url, which no runner escapes, quotes or
// cuts across lines.
const (
	jobTagOpen  = "{dimebeam-job-error:"
	jobTagClose = "}"
	kindInput   = "input"
	kindFailure = "failure"
)

var jobTag = regexp.MustCompile(regexp.QuoteMeta(jobTagOpen) + "(" + kindInput + "|" + kindFailure + "):([A-Za-z0-9_-]*)" + regexp.QuoteMeta(jobTagClose))

// TagJobError returns the error that a stage (a DoFn, a combiner) returns
// to the runner for err, so that ReadJobError finds it: err's message on
// one line, beginning with "dimebeam: ", without secrets (package redact)
// and without the text of a tag, readable as it is in the runner's logs,
// followed by a tag that holds the message and its kind. It is the one writer of the tag: every
// stage of this package returns its errors through it, and so should a
// stage of a pipeline built on it (dimebeam's reports).
//
// The kind is the input's when err says so (vocab.IsUsage), or when it is
// one of the reader's errors about the data (decode.ErrColumn, ErrFormat,
// ErrInvalidValue, ErrDataset, which dime reports with exit status 2 too),
// a ranking's invalid input or incompatible sums (rank.ErrInvalidInput,
// ErrIncompatible) or a refused output (outfile.ErrRefused); anything else
// is a failure of the machine. It returns nil for nil, and an error it has tagged already
// as it is. The returned error wraps err.
func TagJobError(err error) error {
	if err == nil {
		return nil
	}
	var tagged *taggedError
	if errors.As(err, &tagged) {
		return err
	}
	msg := redact.String(strings.Join(strings.Fields(err.Error()), " "))
	if !strings.HasPrefix(msg, "dimebeam: ") { // the message's text only
		msg = "dimebeam: " + msg
	}
	// Text that reads as a tag (a message quoting another job's error) is
	// defused, so that the first tag in the runner's text is this one.
	msg = strings.ReplaceAll(msg, jobTagOpen, strings.TrimSuffix(jobTagOpen, ":")+" ")
	return &taggedError{je: JobError{Msg: msg, Input: inputFault(err)}, err: err}
}

// inputFault reports whether err is about the input rather than the
// machine: it says so (vocab.IsUsage), or it matches one of the sentinels
// by which the reader, package rank and package outfile tell their input
// errors and refusals (they answer errors.Is, not Usage).
func inputFault(err error) bool {
	if vocab.IsUsage(err) {
		return true
	}
	for _, s := range []error{decode.ErrColumn, decode.ErrFormat, decode.ErrInvalidValue, decode.ErrDataset,
		rank.ErrInvalidInput, rank.ErrIncompatible, outfile.ErrRefused} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// taggedError is a JobError as the runner carries it, wrapping the stage's
// error (for a runner that returns it as it is: the direct runner).
type taggedError struct {
	je  JobError
	err error
}

func (e *taggedError) Error() string {
	kind := kindFailure
	if e.je.Input {
		kind = kindInput
	}
	return e.je.Msg + " " + jobTagOpen + kind + ":" + base64.RawURLEncoding.EncodeToString([]byte(e.je.Msg)) + jobTagClose
}

// Usage reports whether the error is about the input.
func (e *taggedError) Usage() bool { return e.je.Input }

func (e *taggedError) Unwrap() error { return e.err }

// ReadJobError returns the JobError whose tag the text of err carries (the
// error of beam.Run for a job whose stage failed), the first if there are
// several (several bundles failed, or the runner repeats the error); ok is
// false when there is none: the runner, the connection to it or a worker
// process failed before a stage could say why.
func ReadJobError(err error) (je *JobError, ok bool) {
	if err == nil {
		return nil, false
	}
	m := jobTag.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, false
	}
	msg, derr := base64.RawURLEncoding.DecodeString(m[2])
	if derr != nil {
		return nil, false
	}
	return &JobError{Msg: string(msg), Input: m[1] == kindInput}, true
}
