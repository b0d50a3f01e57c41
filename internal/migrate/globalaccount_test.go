package migrate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/test/support/fakes"
)

// TestOperatorGlobalAccount: the operator's --ias-global-account-id is read from
// its Deployment in each way a flag is written; a Deployment without it ran
// without one, and a gone Deployment tells nothing.
func TestOperatorGlobalAccount(t *testing.T) {
	s := DefaultOperatorSigns()
	deployment := func(args ...string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Deployment},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: "kube-rbac-proxy", Args: []string{"--secure-listen-address=0.0.0.0:8443"}},
				{Name: "manager", Command: []string{"/manager"}, Args: args}}}}}}
	}
	cases := map[string]struct {
		reason    string
		d         *appsv1.Deployment
		want      string
		wantFound bool
	}{
		"Equals":      {reason: "--flag=value", d: deployment("--leader-elect", "--ias-global-account-id=ga-1"), want: "ga-1", wantFound: true},
		"Separate":    {reason: "--flag value", d: deployment("--ias-global-account-id", "ga-2"), want: "ga-2", wantFound: true},
		"SingleDash":  {reason: "-flag=value, as Go's flag package takes it", d: deployment("-ias-global-account-id=ga-3"), want: "ga-3", wantFound: true},
		"RanWithout":  {reason: "a Deployment without the flag sent it empty", d: deployment("--leader-elect"), want: "", wantFound: true},
		"Gone":        {reason: "no Deployment: the value cannot be read"},
		"OtherPrefix": {reason: "a longer flag of the same start is another flag", d: deployment("--ias-global-account-id-file=/x"), want: "", wantFound: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(fakes.Scheme())
			if tc.d != nil {
				b = b.WithObjects(tc.d)
			}
			got, found, err := OperatorGlobalAccount(context.Background(), b.Build(), s)
			if err != nil || got != tc.want || found != tc.wantFound {
				t.Errorf("%s\nOperatorGlobalAccount() = %q, %t, %v; want %q, %t", tc.reason, got, found, err, tc.want, tc.wantFound)
			}
		})
	}
}

// TestCarryGlobalAccount: the ClusterProviderConfig gets the operator's global
// account where it has none, keeps the same, and a different one refuses the
// migration; a dry run only says what it would set.
func TestCarryGlobalAccount(t *testing.T) {
	cases := map[string]struct {
		reason  string
		have    string
		want    *string
		dryRun  bool
		wantErr bool
		wantPC  string
	}{
		"NotGiven":     {reason: "without the operator's value the config stays", have: "ga-x", wantPC: "ga-x"},
		"Set":          {reason: "an empty config gets the operator's value", want: ptr.To("ga-1"), wantPC: "ga-1"},
		"DryRun":       {reason: "a dry run sets nothing", want: ptr.To("ga-1"), dryRun: true, wantPC: ""},
		"Same":         {reason: "the same value needs nothing", have: "ga-1", want: ptr.To("ga-1"), wantPC: "ga-1"},
		"Differs":      {reason: "another value would give new runtimes other apps: refused", have: "ga-2", want: ptr.To("ga-1"), wantErr: true, wantPC: "ga-2"},
		"EmptyBoth":    {reason: "an operator without a global account and a config without one agree", want: ptr.To(""), wantPC: ""},
		"OperatorNone": {reason: "an operator that sent none beside a config that sends one: refused", have: "ga-2", want: ptr.To(""), wantErr: true, wantPC: "ga-2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pc := &v1alpha1.ClusterProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: v1alpha1.ClusterProviderConfigSpec{}}
			pc.Spec.GlobalAccount = tc.have
			kube := fake.NewClientBuilder().WithScheme(fakes.Scheme()).WithObjects(pc).Build()
			_, err := carryGlobalAccount(context.Background(), Options{Kube: kube, GlobalAccount: tc.want, ProviderConfig: "default", DryRun: tc.dryRun})
			if (err != nil) != tc.wantErr {
				t.Errorf("%s\ncarryGlobalAccount() = %v, want error: %t", tc.reason, err, tc.wantErr)
			}
			got := &v1alpha1.ClusterProviderConfig{}
			if err := kube.Get(context.Background(), client.ObjectKeyFromObject(pc), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPC, got.Spec.GlobalAccount); diff != "" {
				t.Errorf("%s\nthe config's globalAccount (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
