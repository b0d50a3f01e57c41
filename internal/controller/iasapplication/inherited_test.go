package iasapplication

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// carriers answers Users with fixed figures.
type carriers struct {
	waiting  string
	carrying int
}

func (c carriers) NotYetCarrying(context.Context, *v1alpha1.IASApplication, string) (string, int, error) {
	return c.waiting, c.carrying, nil
}

// TestInheritedSecrets: a secret the app held when the resource took it is
// retired only once a RuntimeSecret carries the resource's own secret.
func TestInheritedSecrets(t *testing.T) {
	now := time.Now()
	own := ias.APISecret{ID: "own", Hint: "abcd", Description: v1alpha1.DefaultSecretDescription}
	operators := ias.APISecret{ID: "operators", Hint: "wxyz", Description: "eventing-auth-manager"}
	older := ias.APISecret{ID: "older", Hint: "efgh", Description: v1alpha1.DefaultSecretDescription}
	cases := map[string]struct {
		reason    string
		inherited string
		users     carriers
		retiring  []ias.APISecret
		want      []string
	}{
		"InheritedWithoutUsers": {
			reason:    "With no RuntimeSecret, nothing shows that no runtime holds the inherited secret: it stays.",
			inherited: "operators",
			retiring:  []ias.APISecret{operators},
		},
		"InheritedWhileUsersWait": {
			reason:    "While a RuntimeSecret has not yet carried the new secret, the inherited one stays.",
			inherited: "operators",
			users:     carriers{waiting: "1 of 1 RuntimeSecrets", carrying: 0},
			retiring:  []ias.APISecret{operators},
		},
		"InheritedOnceCarried": {
			reason:    "Once a RuntimeSecret carries the new secret, the inherited one retires, whatever its description.",
			inherited: "operators",
			users:     carriers{carrying: 1},
			retiring:  []ias.APISecret{operators},
			want:      []string{"operators"},
		},
		"MadeHereWithoutUsers": {
			reason:   "A secret this resource made retires after its grace period, with or without users.",
			retiring: []ias.APISecret{older},
			want:     []string{"older"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system"}}
			cr.SetWriteConnectionSecretToReference(&xpv2.LocalSecretReference{Name: "rt-creds"})
			cr.Spec.ForProvider.Secret.RetireAfter = &metav1.Duration{}
			if tc.inherited != "" {
				meta.AddAnnotations(cr, map[string]string{apis.AnnotationInheritedSecrets: tc.inherited})
			}
			cr.Status.AtProvider.SecretPublishedAt = &metav1.Time{Time: now.Add(-time.Hour)}
			cr.Status.AtProvider.SecretID = own.ID
			k := &secretKeeper{users: tc.users, now: func() time.Time { return now }}
			st := secretState{ours: append([]ias.APISecret{own}, tc.retiring...), cur: &own}
			due, err := k.observe(context.Background(), cr, st)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range due {
				got = append(got, s.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nsecrets due: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestTakenByExternalName(t *testing.T) {
	app := &ias.Application{ID: "app-1"}
	cases := map[string]struct {
		reason   string
		statusID string
		created  bool
		took     bool
		want     bool
	}{
		"set by hand": {reason: "an external name set before the first Observe takes the app: its secrets are inherited",
			want: true},
		"handed over": {reason: "an external name changed to another app (a hand-over) takes that app",
			statusID: "app-0", want: true},
		"observed before": {reason: "an app the status records is the resource's already",
			statusID: "app-1"},
		"made by its Create": {reason: "the app the resource's own Create made is no take, also when a crash lost the status",
			created: true},
		"taken before, status lost": {reason: "an app taken before (its inherited secrets recorded, none or some) is no take again when the status is lost",
			took: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Name: "rt", Namespace: "kcp-system"}}
			meta.SetExternalName(cr, app.ID)
			cr.Status.AtProvider.ID = tc.statusID
			if tc.created {
				meta.SetExternalCreateSucceeded(cr, time.Now())
			}
			if tc.took {
				meta.AddAnnotations(cr, map[string]string{apis.AnnotationInheritedSecrets: ""})
			}
			if got := takenByExternalName(cr, app); got != tc.want {
				t.Errorf("%s\ntakenByExternalName = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestLegacyAnnotationKeys: the hand-over and the inherited secrets are read
// under the keys they had before, and recording inherited secrets moves them
// to the new key.
func TestLegacyAnnotationKeys(t *testing.T) {
	cr := &v1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rt", Annotations: map[string]string{
		"ias.eventingauth.kyma-project.io/hand-over-to":      "other/rt",
		"ias.eventingauth.kyma-project.io/inherited-secrets": "operators",
	}}}
	if owner, err := wantedOwner(cr); err != nil || owner != "other/rt" {
		t.Errorf("wantedOwner = %q, %v; want the hand-over under the old key, other/rt", owner, err)
	}
	if !inherited(cr, "operators") {
		t.Error("a secret listed under the old key is not inherited")
	}
	inherit(cr, []ias.APISecret{{ID: "operators"}, {ID: "older"}})
	want := map[string]string{"ias.eventingauth.kyma-project.io/hand-over-to": "other/rt", apis.AnnotationInheritedSecrets: "operators,older"}
	if diff := cmp.Diff(want, cr.GetAnnotations()); diff != "" {
		t.Errorf("annotations after inherit: -want +got:\n%s", diff)
	}
}
