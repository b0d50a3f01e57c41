package runtimewatcher

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
)

// headerRelaySignature authenticates an event one replica hands to another:
// an HMAC-SHA256, under the key the replicas share (Options.RelayKey), of the
// sender's address, the forwarded certificate and the body. Only a replica
// holds the key, so no other caller can send a relay: the gateway's header
// is trusted for what it is, and the relay header, which keeps an event
// from being relayed again, cannot be set by anyone else.
const headerRelaySignature = "X-Eventing-Auth-Relay-Signature"

// relaySignature signs a relay.
func relaySignature(key []byte, from, xfcc string, body []byte) string {
	m := hmac.New(sha256.New, key)
	for _, part := range [][]byte{[]byte(from), []byte(xfcc), body} {
		m.Write(part)
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

// forgedRelay is the refusal of a relay header without a valid signature.
var forgedRelay = &refusal{http.StatusUnauthorized, DropForgedRelay, "a relay between replicas without a valid signature"}

// checkRelay refuses a request that says it was relayed by a replica
// unless its signature is valid; the body it read is put back for the rest.
func (l *Listener) checkRelay(r *http.Request) *refusal {
	from := r.Header.Get(headerRelayed)
	if from == "" {
		return nil
	}
	if len(l.o.RelayKey) == 0 {
		return forgedRelay
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return oversized
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	want := relaySignature(l.o.RelayKey, from, r.Header.Get(headerClientCert), body)
	if !hmac.Equal([]byte(want), []byte(r.Header.Get(headerRelaySignature))) {
		return forgedRelay
	}
	return nil
}
