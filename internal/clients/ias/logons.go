package ias

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// userLogons counts the failed logons of one technical user of one tenant by
// the configs of one namespace, or by the platform's ClusterProviderConfigs:
// IAS locks a user's password after a few failed logons, and then every
// runtime of the tenant stops. A namespace's rejected passwords hold back
// only that namespace's other unproven passwords of the user, for backoff,
// and only one unproven password of theirs is tried at a time; a password IAS
// accepted keeps being used. So five ProviderConfigs of a namespace with five
// wrong passwords cost one failed logon a backoff, not five, and nothing a
// namespace does holds the platform's logons (a namespace may not name a
// platform user at all: see package tenantconfig).
//
// The platform's passwords come from its administrators: one that IAS
// rejected waits out its own logon circuit, but a different one (the
// successor put into the Secret after a rotation, also right after a restart,
// when nothing is proven yet) is tried at once, one at a time.
type userLogons struct {
	url, username string
	backoff       time.Duration
	platform      bool

	mu sync.Mutex
	// proven are the digests of the passwords IAS accepted.
	proven map[string]bool
	// rejectedAt is when IAS last rejected a password of the user.
	rejectedAt time.Time
	// probing is the digest of the unproven password whose call is in flight.
	probing string
	// used is when a call last asked (admit), for the Pool's sweep.
	used time.Time
}

// LogonHeldError is a call not sent: its password is not proven, and IAS
// rejected another (or the same) password of the user lately, or is being
// asked with another unproven one right now.
type LogonHeldError struct {
	URL, Username string
	RejectedAt    time.Time
	Until         time.Time
}

func (e *LogonHeldError) Error() string {
	if e.Until.IsZero() {
		return fmt.Sprintf("IAS tenant %s: another password of user %q that IAS has not accepted yet is being tried; this one waits its turn, since IAS locks a user after a few failed logons", e.URL, e.Username)
	}
	return fmt.Sprintf("IAS tenant %s rejected the credentials of user %q from this namespace at %s (401): no other password of the user that IAS has not accepted yet is tried from this namespace before %s, since IAS locks a user after a few failed logons",
		e.URL, e.Username, e.RejectedAt.UTC().Format(time.RFC3339), e.Until.UTC().Format(time.RFC3339))
}

// admit tells whether a call with the password of digest may be sent now, and
// whether it is the user's one probe of an unproven password.
func (u *userLogons) admit(digest string, now time.Time) (probe bool, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.used = now
	if u.proven[digest] {
		return false, nil
	}
	if until := u.rejectedAt.Add(u.backoff); !u.platform && !u.rejectedAt.IsZero() && now.Before(until) {
		return false, &LogonHeldError{URL: u.url, Username: u.username, RejectedAt: u.rejectedAt, Until: until}
	}
	if u.probing != "" && u.probing != digest {
		return false, &LogonHeldError{URL: u.url, Username: u.username}
	}
	u.probing = digest
	return true, nil
}

// record learns from IAS's answer to a call with the password of digest: a
// 401 rejects it (and, unless it had worked before, holds back the
// user's unproven passwords), any other answer proves it. A 403 proves it too:
// IAS checked the password and found the user lacks a role, which is no
// failed logon (RFC 9110, 15.5.4); the credentials' own logon circuit still
// stops their calls.
func (u *userLogons) record(digest string, probe bool, resp *http.Response, now time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if probe && u.probing == digest {
		u.probing = ""
	}
	switch {
	case resp == nil:
	case resp.StatusCode == http.StatusUnauthorized:
		if u.proven[digest] {
			// A password that worked was changed in IAS: its successor, put
			// in the credentials Secret now, is tried at once. Guessing does
			// not get here, since only IAS proves a password.
			delete(u.proven, digest)
			return
		}
		u.rejectedAt = now
	default:
		if u.proven == nil {
			u.proven = map[string]bool{}
		}
		u.proven[digest] = true
	}
}

// idle tells whether the Pool may forget the user: not asked for within
// after, no call in flight, no rejection still holding passwords back.
func (u *userLogons) idle(now time.Time, after time.Duration) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.probing == "" && now.Sub(u.used) > after && now.Sub(u.rejectedAt) > u.backoff
}
