package ias

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// errOperation names the IAS operation a failure of a call happened in.
const errOperation = "IAS %s"

// Errors of a tenant URL (ValidateURL); they never repeat the URL, which may
// hold a mistyped credential.
const (
	errURLInvalid     = "not a valid URL: it must look like https://<tenant>.accounts.ondemand.com"
	errURLCredentials = "the URL must not carry credentials; put them under username and password"
	errURLNotBase     = "the URL must be the tenant's base URL, without path, query or fragment"
	// errURLRemoteHTTP: the host.
	errURLRemoteHTTP = "http is allowed only to a loopback host; %s needs https"
	// errURLScheme: the scheme.
	errURLScheme = "scheme %q is not supported; use https"
)

// Errors of a client certificate, exported so that callers and their tests can
// tell them apart.
var (
	// ErrPEMPair: tls.crt and tls.key are not a PEM certificate and its key.
	ErrPEMPair = errors.New("not a PEM certificate with its matching PEM private key")
	// ErrPKCS12Unopened: the bundle or its password is wrong.
	ErrPKCS12Unopened = errors.New("not a PKCS#12 bundle with a certificate and private key that this password opens")
	// ErrPKCS12Legacy: the bundle is protected with algorithms that FIPS
	// 140-3 does not allow, and the process runs with GODEBUG=fips140=only.
	ErrPKCS12Legacy = errors.New("a PKCS#12 bundle protected with algorithms that FIPS 140-only mode refuses (SHA-1, 3DES or RC2): export it with AES-256 and SHA-256, or use tls.crt and tls.key")
)

// APIError is an answer from IAS other than the expected success. It carries the
// operation, the status code and IAS's own message, never request data.
type APIError struct {
	Operation  string
	StatusCode int
	Message    string
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("IAS %s answered %d %s", e.Operation, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	switch e.StatusCode {
	case http.StatusUnauthorized:
		msg += " (check the username and password in the ProviderConfig's credentials Secret)"
	case http.StatusForbidden:
		msg += " (the IAS user lacks the authorization to manage applications)"
	}
	return msg
}

// IsNotFound tells whether err is an IAS 404.
func IsNotFound(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.StatusCode == http.StatusNotFound
}

// apiError reads IAS's error body {"error": {"code", "message", "details"}}.
func apiError(op string, resp *http.Response, body []byte) error {
	var eb struct {
		Error struct {
			Message string `json:"message"`
			Details []struct {
				Target  string `json:"target"`
				Message string `json:"message"`
			} `json:"details"`
		} `json:"error"`
	}
	e := &APIError{Operation: op, StatusCode: resp.StatusCode}
	if json.Unmarshal(body, &eb) == nil {
		e.Message = eb.Error.Message
		for _, d := range eb.Error.Details {
			e.Message += fmt.Sprintf("; %s: %s", d.Target, d.Message)
		}
	}
	return e
}

// ErrURLPlainHTTP refuses plain http where the provider was not started for tests.
var ErrURLPlainHTTP = errors.New("http is refused: the provider takes plain http only to a loopback host and only when started for tests (--test-plain-http-loopback); use https")
