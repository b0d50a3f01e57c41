package iasapplication

import (
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	corev1 "k8s.io/api/core/v1"
)

// TestUnpublished: an Observe hands crossplane-runtime's publisher the
// connection details only when the connection Secret does not hold them yet.
func TestUnpublished(t *testing.T) {
	cd := managed.ConnectionDetails{"client_id": []byte("id"), "client_secret": []byte("s3cr3t")}
	secret := func(data map[string][]byte) *corev1.Secret { return &corev1.Secret{Data: data} }
	cases := map[string]struct {
		reason      string
		conn        *corev1.Secret
		wantPublish bool
	}{
		"NoSecretYet": {
			reason: "without a connection Secret the credentials are published",
			conn:   nil, wantPublish: true,
		},
		"HeldAlready": {
			reason: "a Secret that holds them needs no write",
			conn:   secret(map[string][]byte{"client_id": []byte("id"), "client_secret": []byte("s3cr3t")}),
		},
		"AValueDiffers": {
			reason: "a differing value is written",
			conn:   secret(map[string][]byte{"client_id": []byte("id"), "client_secret": []byte("old")}), wantPublish: true,
		},
		"AKeyIsMissing": {
			reason: "so is a missing key",
			conn:   secret(map[string][]byte{"client_id": []byte("id")}), wantPublish: true,
		},
		"AKeyIsExtra": {
			reason: "and an extra one",
			conn:   secret(map[string][]byte{"client_id": []byte("id"), "client_secret": []byte("s3cr3t"), "x": nil}), wantPublish: true,
		},
		"StringDataToSet": {
			reason: "stringData not yet folded into data is a write to come",
			conn:   &corev1.Secret{Data: cd, StringData: map[string]string{"client_secret": "other"}}, wantPublish: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := unpublished(tc.conn, cd) != nil; got != tc.wantPublish {
				t.Errorf("%s\ndetails handed to the publisher: %v, want %v", tc.reason, got, tc.wantPublish)
			}
		})
	}
}
