package breaker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RejectedRule is what follows when a tenant rejected credentials, in the
// one sentence every place that shows it uses: a resource's condition, the
// ProviderConfig's event, the flag's help and the operations guide.
const RejectedRule = "no call is made with them until they change in the credentials Secret, " +
	"or until one probe after --ias-rejected-credentials-backoff, since IAS locks a user after a few failed logons"

// Error is a call to a target that failed, or was not made because the target
// is known to fail. It names the target, the cause and the next try; never a
// credential or request data. It does not wrap the network error on purpose:
// client-go would retry a connection reset inside the reconcile.
type Error struct {
	Kind   Kind
	Target string
	// Cause is what the last failure was: "timeout", "connection refused",
	// "HTTP 503", ...
	Cause string
	// FailedFast: no call was made.
	FailedFast bool
	// Busy: no call was made because other calls to failing targets hold every
	// slot they may hold.
	Busy bool
	// Pending: no call was made, or the call goes on without the caller,
	// because the target has not answered its first call (with these
	// credentials) yet.
	Pending bool
	// Rejected: the target rejected the credentials.
	Rejected bool
	// Next is when the next call may go out; zero while the circuit stays
	// closed and the caller's own backoff retries.
	Next time.Time
}

func (e *Error) Error() string {
	what := string(e.Kind)
	switch e.Kind {
	case Tenant:
		what = "IAS tenant"
	case Runtime:
		what = "runtime API server"
	}
	next := e.Next.UTC().Format(time.RFC3339)
	switch {
	case e.Rejected:
		return fmt.Sprintf("%s %s rejected the credentials (%s): %s (probe at %s)", what, e.Target, e.Cause, RejectedRule, next)
	case e.Pending:
		// No time: while the answer is out its resource tries again every few
		// seconds, and the same words cost no status write.
		return fmt.Sprintf("%s %s has not answered a first call yet; it is tried again within seconds", what, e.Target)
	case e.Busy:
		return fmt.Sprintf("%s %s is failing (%s); not tried now, since other failing targets hold every slot for such calls; next try at %s", what, e.Target, e.Cause, next)
	case e.FailedFast:
		return fmt.Sprintf("%s %s is failing (%s); calls fail fast until the next try at %s", what, e.Target, e.Cause, next)
	}
	if e.Next.IsZero() {
		return fmt.Sprintf("%s %s failed (%s); retrying with backoff", what, e.Target, e.Cause)
	}
	return fmt.Sprintf("%s %s failed (%s); next try at %s", what, e.Target, e.Cause, next)
}

// ErrRedirect is a target that answered with a redirect, which is never
// followed: requests carry credentials meant for the target alone.
var ErrRedirect = errors.New("redirect, not followed")

// ThrottledError is a target that asked for a pause (HTTP 429 with
// Retry-After) longer than a call waits, or answered 429 again and again. It
// is a failure of the target: its circuit opens, so that no worker sleeps on
// a target that throttles for good, and the calls to it fail fast.
type ThrottledError struct {
	// RetryAfter is the pause the target asked for.
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return fmt.Sprintf("HTTP 429 Too Many Requests, asking for a pause of %v", e.RetryAfter)
}

// RetryAfter is the pause a 429 answer asks for in its Retry-After, in
// seconds or as an HTTP date; a second when it says none or nothing readable.
func RetryAfter(resp *http.Response) time.Duration {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return time.Second
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return time.Second
}

// IsTargetFailure tells whether err is a call to a target that failed or was
// refused because the target is failing (not because it rejected credentials).
func IsTargetFailure(err error) bool {
	var e *Error
	return errors.As(err, &e) && !e.Rejected
}

// unavailable tells whether a call's outcome shows its target failing: no
// answer, or a 5xx. Other answers, 429 and 4xx included, show it working.
func unavailable(resp *http.Response, err error) bool {
	return noAnswer(resp, err) || serverError(resp, err)
}

// noAnswer: the call got no answer (timeout, refused, reset, TLS, DNS). A
// call its caller canceled tells nothing of the target: a reconcile that
// ended, a listing dropped, a process stopping.
func noAnswer(_ *http.Response, err error) bool {
	return err != nil && !errors.Is(err, context.Canceled)
}

// serverError: the target answered 5xx.
func serverError(resp *http.Response, err error) bool {
	return err == nil && resp != nil && resp.StatusCode >= 500
}

// Cause names what a failed call met, for a person: the class of error, never
// its text, which may carry a URL with query data.
func Cause(resp *http.Response, err error) string {
	if err == nil {
		if resp == nil {
			return "no answer"
		}
		return fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	var (
		dnsErr  *net.DNSError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		recErr  tls.RecordHeaderError
	)
	var throttled *ThrottledError
	switch {
	case errors.As(err, &throttled):
		// Without the pause: the words stay the same from one try to the next.
		return "HTTP 429 Too Many Requests, again or with a long Retry-After"
	case errors.Is(err, ErrRedirect):
		return "a redirect to another address, not followed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.As(err, &dnsErr):
		return "host not found"
	case errors.As(err, &certErr), errors.As(err, &unknown), errors.As(err, &recErr),
		strings.Contains(err.Error(), "tls:"):
		return "TLS failure"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "no answer"
}
