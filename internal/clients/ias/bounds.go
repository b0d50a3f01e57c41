package ias

import (
	"errors"
	"fmt"
	"regexp"

	xperrors "github.com/crossplane/crossplane-runtime/v2/pkg/errors"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/operation"
)

// MaxAnswerBytes bounds every answer body read from IAS, the well-known
// document included. The largest real answer is a page of 100 applications,
// tens of KiB; a tenant that sends more is refused, not read.
const MaxAnswerBytes = 4 << 20

// MaxPageBytes bounds a page of a listing: a real page of 100 applications
// is tens of KiB, and a page read whole is held while it is decoded, so a
// tenant padding its pages (a cursor of megabytes) costs a listing at most
// this much at a time.
const MaxPageBytes = 1 << 20

// maxAnswerBytes is the bound of an operation's answer.
func maxAnswerBytes(op string) int64 {
	if op == operation.ListApplications {
		return MaxPageBytes
	}
	return MaxAnswerBytes
}

// TooLargeError is an IAS answer refused for its size.
type TooLargeError struct {
	Operation string
	Limit     int64
}

// callFailed names the operation of a call that failed before IAS's answer
// was read whole; a TooLargeError names it already.
func callFailed(err error, op string) error {
	if tl := (*TooLargeError)(nil); errors.As(err, &tl) {
		return tl
	}
	return xperrors.Wrapf(err, errOperation, op)
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("IAS %s: the answer is larger than %d MiB and was not read", e.Operation, e.Limit>>20)
}

// Page limits of one listing. A listing stops with a PageLimitError once it
// has read more pages than the tenant could hold: twice the pages its last
// complete listing took, plus a margin; a tenant never listed gets
// PoolOptions.MaxPages, default DefaultMaxPages (100,000 apps).
const (
	DefaultMaxPages = 1000
	pageMargin      = 10
	pageSize        = 100
)

// maxPages is the page limit of a listing of a tenant whose last complete
// listing showed listed apps (0: none yet). A filtered lookup is bounded the
// same way: a tenant that filtered page by page could need a page per 100 apps.
func maxPages(listed int64, unlisted int) int {
	if listed <= 0 {
		return unlisted
	}
	return int(2*((listed+pageSize-1)/pageSize)) + pageMargin
}

// raiseListed records that a listing of all apps read `read` apps before it
// stopped at its page limit: the tenant holds at least that many, so the next
// listing may read twice as many pages. A tenant that grew more than twice
// between two complete listings (thousands of runtimes made between them) is
// listed again within a few tries, and its inventory is not stuck at the old
// size; a listing that never ends still stops every time, and never later
// than a tenant never listed.
func (s *tenantState) raiseListed(read int64) {
	ceiling := int64((s.maxPages-pageMargin)/2) * pageSize // the apps whose limit is a never-listed tenant's
	read = min(read, ceiling)
	for {
		cur := s.listedApps.Load()
		if cur >= read || s.listedApps.CompareAndSwap(cur, read) {
			return
		}
	}
}

// PageLimitError is a listing stopped because it did not end: more pages than
// the limit, or a cursor IAS had sent before.
type PageLimitError struct {
	Tenant string
	Filter string
	Pages  int
	Reason string
}

func (e *PageLimitError) Error() string {
	what := "the listing of all applications"
	if e.Filter != "" {
		what = fmt.Sprintf("the listing %q", e.Filter)
	}
	return fmt.Sprintf("IAS tenant %s: %s did not end: %s after %d pages; it is tried again later", e.Tenant, what, e.Reason, e.Pages)
}

// appNamePattern is what an application name used in a filter may hold: IAS's
// filters take the value unquoted, so a space or a quote would change the
// filter, and a filter holds at most 255 characters ("name eq " and 247).
// Runtime IDs and Kubernetes names fit.
var appNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,246}$`)

// ValidAppName tells whether name can be looked up by a filter as it is.
func ValidAppName(name string) bool { return appNamePattern.MatchString(name) }
