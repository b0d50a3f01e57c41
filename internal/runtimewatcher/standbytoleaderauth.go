package runtimewatcher

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
)

// headerHandOnSignature authenticates an event one replica hands to another:
// an HMAC-SHA256, under the key the replicas share (Options.HandOnKey), of the
// sender's address, the forwarded certificate and the body. Only a replica
// holds the key, so no other caller can send a hand-on: the gateway's header
// is trusted for what it is, and the hand-on header, which keeps an event
// from being handed on again, cannot be set by anyone else.
const headerHandOnSignature = "X-Eventing-Auth-Hand-On-Signature"

// handOnSignature signs a hand-on.
func handOnSignature(key []byte, from, xfcc string, body []byte) string {
	m := hmac.New(sha256.New, key)
	for _, part := range [][]byte{[]byte(from), []byte(xfcc), body} {
		m.Write(part)
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// forgedHandOn is the refusal of a hand-on header without a valid signature.
var forgedHandOn = &refusal{http.StatusUnauthorized, DropForgedHandOn, "a hand-on between replicas without a valid signature"}

// checkHandOn refuses a request that says it was handed on by a replica
// unless its signature is valid; the body it read is put back for the rest.
func (l *Listener) checkHandOn(r *http.Request) *refusal {
	from := r.Header.Get(headerHandedOn)
	if from == "" {
		return nil
	}
	if len(l.o.HandOnKey) == 0 {
		return forgedHandOn
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return oversized
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	want := handOnSignature(l.o.HandOnKey, from, r.Header.Get(headerClientCert), body)
	if !hmac.Equal([]byte(want), []byte(r.Header.Get(headerHandOnSignature))) {
		return forgedHandOn
	}
	return nil
}
