// Package skrwebhook stands in, on this machine, for what carries a change of a
// runtime's Secret to the provider in a landscape: Lifecycle Manager's
// skr-webhook on the runtime and the control plane's gateway. It is a
// validating admission webhook that a runtime API server calls on CREATE,
// UPDATE and DELETE of the Secrets the Watcher CR selects; it posts the event
// as the gateway delivers it: to /v2/<component>/event, with the body
// {watched:{namespace,name}, watchedGvk}, and the runtime's client certificate
// (common name: the runtime ID) in X-Forwarded-Client-Cert. Like the
// skr-webhook, it waits for the listener's answer, retries a failed post twice,
// and always allows the change. The local stack, the e2e tests and the bench
// use it; the skr-webhook itself is not on the Go module proxy.
package skrwebhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kyma-project/runtime-watcher/listener/pkg/v2/types"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runtimev1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/testcerts"
)

// Name is the ValidatingWebhookConfiguration's name on the runtime.
const Name = "provider-eventing-auth-watcher"

// A Forwarder is the stand-in: a webhook server on loopback.
type Forwarder struct {
	// URL is the webhook's base address (https).
	URL string
	// CABundle is the CA the runtime API server trusts the webhook with.
	CABundle []byte
	// ClientCA is the CA that issued the runtimes' client certificates, the
	// one the provider's --runtime-watcher-client-ca names.
	ClientCA []byte
	// Sent counts events the listener answered with 200; Refused those it
	// answered otherwise or that could not be posted.
	Sent, Refused atomic.Int64

	listener  string
	runtimeOf func(namespace, name string) string
	ca        *testcerts.CA
	clientCA  *testcerts.CA
	certs     sync.Map // runtime ID -> X-Forwarded-Client-Cert value
	post      *http.Client
	srv       *http.Server
}

// Start serves the webhook. Events go to listenerURL (the provider's
// http://host:port/v2/<component>/event); runtimeOf names the runtime an
// object is on, "" for none it serves (one runtime per API server in a
// landscape; the bench and the integration suite keep many on one).
// clientCA issues the runtimes' client certificates, as Lifecycle Manager's
// CA Issuer does; nil: the webhook's own CA.
func Start(listenerURL string, clientCA *testcerts.CA, runtimeOf func(namespace, name string) string) (*Forwarder, error) {
	ca, err := testcerts.NewCA("skr-webhook-ca")
	if err != nil {
		return nil, err
	}
	if clientCA == nil {
		clientCA = ca
	}
	serving, err := ca.IssueServer("skr-webhook")
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		return nil, err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return nil, err
	}
	f := &Forwarder{URL: "https://" + ln.Addr().String(), CABundle: ca.PEM, ClientCA: clientCA.PEM, listener: listenerURL, runtimeOf: runtimeOf, ca: ca, clientCA: clientCA,
		post: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.review), ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln) //nolint:errcheck // Ends with Close.
	return f, nil
}

// Close stops the webhook.
func (f *Forwarder) Close() { _ = f.srv.Close() } //nolint:errcheck // Stopping.

// Deregister stops the runtime API server of c calling the webhook.
func (f *Forwarder) Deregister(ctx context.Context, c client.Client) error {
	return client.IgnoreNotFound(c.Delete(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: Name}}))
}

// Register makes the runtime API server of c call the webhook for the Secrets
// the Watcher selects, with failurePolicy Ignore as the skr-webhook's.
func (f *Forwarder) Register(ctx context.Context, c client.Client) error {
	return c.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: Name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "secrets.watcher.provider-eventing-auth.kyma-project.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(f.URL + "/validate/provider-eventing-auth"), CABundle: f.CABundle},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{runtimev1alpha1.LabelWatchedBy: runtimev1alpha1.WatchedBy}},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
			}},
		}},
	})
}

// watchedObject is what the skr-webhook reads of an object.
type watchedObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// review answers one AdmissionReview, after posting its event.
func (f *Forwarder) review(w http.ResponseWriter, r *http.Request) {
	rev := admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(&rev); err != nil || rev.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	raw := rev.Request.Object.Raw
	if rev.Request.Operation == admissionv1.Delete {
		raw = rev.Request.OldObject.Raw
	}
	obj := watchedObject{}
	if err := json.Unmarshal(raw, &obj); err == nil && obj.Name != "" {
		f.forward(r.Context(), obj)
	}
	rev.Response = &admissionv1.AdmissionResponse{UID: rev.Request.UID, Allowed: true}
	rev.Request = nil
	_ = json.NewEncoder(w).Encode(rev) //nolint:errcheck // The API server ignores a failure (failurePolicy Ignore).
}

// forward posts the event of obj, as the skr-webhook does, three tries at most.
func (f *Forwarder) forward(ctx context.Context, obj watchedObject) {
	id := f.runtimeOf(obj.Namespace, obj.Name)
	if id == "" {
		return // not on a runtime this stand-in serves
	}
	xfcc, err := f.clientCert(id)
	if err != nil {
		f.Refused.Add(1)
		return
	}
	body, _ := json.Marshal(types.WatchEvent{ //nolint:errcheck // Plain values.
		Watched:    types.ObjectKey{Namespace: obj.Namespace, Name: obj.Name},
		WatchedGvk: metav1.GroupVersionKind(schema.FromAPIVersionAndKind(obj.APIVersion, obj.Kind)),
	})
	for try := range 3 {
		if try > 0 {
			time.Sleep(time.Duration(try) * 100 * time.Millisecond)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.listener, bytes.NewReader(body))
		if err != nil {
			break
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-Client-Cert", xfcc)
		resp, err := f.post.Do(req)
		if err != nil {
			continue
		}
		resp.Body.Close() //nolint:errcheck,gosec // Read nothing.
		if resp.StatusCode == http.StatusOK {
			f.Sent.Add(1)
			return
		}
		if resp.StatusCode < 500 {
			break // the skr-webhook retries only what failed on the way
		}
	}
	f.Refused.Add(1)
}

// clientCert returns the X-Forwarded-Client-Cert of runtime id's certificate.
func (f *Forwarder) clientCert(id string) (string, error) {
	if v, ok := f.certs.Load(id); ok {
		return v.(string), nil
	}
	c, err := f.clientCA.Issue(id, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	if err != nil {
		return "", err
	}
	v, _ := f.certs.LoadOrStore(id, XFCC(c.Cert))
	return v.(string), nil
}

// XFCC is the X-Forwarded-Client-Cert value Istio's gateway sets for a client
// that presented cert: its hash, the URL-encoded PEM and its subject.
func XFCC(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.Raw)
	pemText := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
	return fmt.Sprintf(`Hash=%s;Cert="%s";Subject="CN=%s";URI=`, hex.EncodeToString(sum[:]), url.QueryEscape(string(pemText)), cert.Subject.CommonName)
}
