package provider

import (
	"crypto/sha256"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a review's answer is kept, per token: as controller-runtime's
// filter keeps them (a minute authenticated, five allowed), denials shorter so
// that a role bound now takes effect soon.
const (
	metricsAllowedTTL = time.Minute
	metricsDeniedTTL  = 10 * time.Second
	metricsCallers    = 64
)

// authenticatedMetrics is the metrics endpoint's filter: a caller needs a
// bearer token that the API server authenticates (TokenReview) and authorises
// for GET on the path (SubjectAccessReview), as kubebuilder's scaffold asks
// with controller-runtime's filters.WithAuthenticationAndAuthorization. That
// filter links k8s.io/apiserver into the binary: 12 MB more, 4 MiB more
// resident at start, which took the provider at 10,000 runtimes past its
// memory budget; this one needs only client-go, which the provider has.
func authenticatedMetrics(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	r := &metricsReviews{authn: authn.TokenReviews(), authz: authz.SubjectAccessReviews(), answers: lru.New(metricsCallers)}
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
			if !ok || token == "" {
				http.Error(w, "Unauthorized: a bearer token is needed", http.StatusUnauthorized)
				return
			}
			code, err := r.review(req, token)
			if err != nil {
				log.Error(err, "Cannot review a metrics caller")
				http.Error(w, "The API server did not answer the review", http.StatusInternalServerError)
				return
			}
			if code != http.StatusOK {
				http.Error(w, http.StatusText(code), code)
				return
			}
			next.ServeHTTP(w, req)
		}), nil
	}, nil
}

// metricsReviews asks the API server about callers and keeps its answers.
type metricsReviews struct {
	authn authenticationclient.TokenReviewInterface
	authz authorizationclient.SubjectAccessReviewInterface
	// answers, an lru.Cache, locks itself.
	answers *lru.Cache // digest of token and path -> metricsAnswer
}

type metricsAnswer struct {
	code    int
	expires time.Time
}

// review answers 200, 401 or 403 for the caller of req with token.
func (r *metricsReviews) review(req *http.Request, token string) (int, error) {
	key := sha256.Sum256([]byte(req.URL.Path + "\x00" + token))
	if v, ok := r.answers.Get(key); ok && time.Now().Before(v.(metricsAnswer).expires) {
		return v.(metricsAnswer).code, nil
	}
	code, err := r.ask(req, token)
	if err != nil {
		return 0, err
	}
	ttl := metricsAllowedTTL
	if code != http.StatusOK {
		ttl = metricsDeniedTTL
	}
	r.answers.Add(key, metricsAnswer{code: code, expires: time.Now().Add(ttl)})
	return code, nil
}

func (r *metricsReviews) ask(req *http.Request, token string) (int, error) {
	tr, err := r.authn.Create(req.Context(), &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	u := tr.Status.User
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := r.authz.Create(req.Context(), &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: req.URL.Path, Verb: strings.ToLower(req.Method)},
	}}, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}
