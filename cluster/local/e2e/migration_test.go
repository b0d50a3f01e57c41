//go:build e2e

package e2e

import (
	"context"
	"fmt"
	coordinationv1 "k8s.io/api/coordination/v1"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/cluster/local/localstack"
	"github.com/kyma-project/provider-eventing-auth/internal/eventingauth"
	"github.com/kyma-project/provider-eventing-auth/internal/migrate"
	"github.com/kyma-project/provider-eventing-auth/test/support/iassim"
)

// How the old operator's runtimes of the migration test are broken.
const (
	healthy           = ""
	appMissing        = "app missing"
	twoApps           = "two apps"
	secretMissing     = "runtime Secret missing"
	secretDiffers     = "runtime Secret differs from IAS"
	interruptedBefore = "interrupted run" // an earlier run made only the connection Secret
)

// oldRuntime is one runtime as eventing-auth-manager left it.
type oldRuntime struct {
	id, broken string
	appID      string
	secretIDs  []string          // the app's api secrets before the migration
	data       map[string][]byte // the Secret on the runtime before the migration
}

// TestMigrationFromEventingAuthManager: 50 runtimes in eventing-auth-manager's
// shape, 10 of them broken, are handed over to the provider by the migrate
// command: no new IAS secret, no second app, the runtime Secrets' data
// unchanged; the broken ones reported, then, once the provider serves them
// with credentials of its own, finished, but for those that need a person;
// and afterwards a Kyma CR deleted takes its Secret and app with it.
func TestMigrationFromEventingAuthManager(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	s := startStack(t, ctx, localstack.Options{ProviderArgs: []string{"--poll=30s"}, ProviderLater: true})
	proxy, err := newRuntimeProxy(s.RuntimeKubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	defer proxy.Close()

	var runtimes []*oldRuntime
	for i := range 50 {
		broken := healthy
		switch {
		case i < 3:
			broken = appMissing
		case i < 5:
			broken = twoApps
		case i < 8:
			broken = secretMissing
		case i < 10:
			broken = secretDiffers
		case i == 10:
			broken = interruptedBefore
		}
		r := &oldRuntime{id: fmt.Sprintf("runtime-%02d", i), broken: broken}
		g.Expect(seedOldRuntime(ctx, s, proxy, r)).To(Succeed(), r.id)
		runtimes = append(runtimes, r)
	}
	// eventing-auth-manager as its own kustomize deploys it, still running:
	// its Deployment, a pod of it and its leader Lease, renewed now.
	signs := migrate.DefaultOperatorSigns()
	op := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: signs.Deployment, Namespace: signs.Namespace},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: signs.PodLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: signs.PodLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "eventing-auth-manager",
					Args: []string{"--ias-global-account-id=" + localstack.PlatformGlobalAccount}}}}}}}
	g.Expect(s.Kube.Create(ctx, op)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: signs.Deployment + "-7c9f8-x2k4q", Namespace: signs.Namespace, Labels: signs.PodLabels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "eventing-auth-manager"}}}}
	g.Expect(s.Kube.Create(ctx, pod)).To(Succeed())
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: signs.LeaderLease, Namespace: signs.Namespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(pod.Name + "_1"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	g.Expect(s.Kube.Create(ctx, lease)).To(Succeed())

	runMigrate := migrateCommand(g, ctx, s)

	// Refused while eventing-auth-manager runs, with the defaults: each sign
	// named.
	got, code := runMigrate("--dry-run")
	g.Expect(code).To(Equal(1), got)
	g.Expect(got).To(ContainSubstring("eventing-auth-manager still runs"))
	g.Expect(got).To(ContainSubstring("its leader Lease kcp-system/210590f8.kyma-project.io was renewed"))
	g.Expect(got).To(ContainSubstring("its Deployment kcp-system/eventing-auth-manager-controller-manager has replicas"))
	g.Expect(got).To(ContainSubstring("its pod kcp-system/" + pod.Name))
	// Scaled to zero (as a GitOps sync may undo): its pod and Lease still say
	// it runs.
	op.Spec.Replicas = ptr.To[int32](0)
	g.Expect(s.Kube.Update(ctx, op)).To(Succeed())
	got, code = runMigrate("--dry-run")
	g.Expect(code).To(Equal(1), got)
	g.Expect(got).NotTo(ContainSubstring("has replicas"))
	g.Expect(got).To(ContainSubstring("its leader Lease"))
	// Removed for good, as docs/migration.md says: the Deployment and its
	// pods gone, the Lease no longer renewed.
	g.Expect(s.Kube.Delete(ctx, op)).To(Succeed())
	g.Expect(s.Kube.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
	g.Eventually(func() bool {
		return kerrors.IsNotFound(s.Kube.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))
	}, time.Minute, 200*time.Millisecond).Should(BeTrue())
	lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now().Add(-time.Minute)}
	g.Expect(s.Kube.Update(ctx, lease)).To(Succeed())

	// The operator's Deployment is gone, and with it its --ias-global-account-id:
	// the migration asks for it.
	got, code = runMigrate("--dry-run")
	g.Expect(code).To(Equal(1), got)
	g.Expect(got).To(ContainSubstring("Pass --%s with the value it ran with", migrate.OperatorGlobalAccountFlag))
	globalAccount := "--" + migrate.OperatorGlobalAccountFlag + "=" + localstack.PlatformGlobalAccount

	// A dry run reports and changes nothing.
	got, code = runMigrate("--dry-run", globalAccount)
	g.Expect(code).To(Equal(2), got)
	lines := outcomes(got)
	for _, r := range runtimes {
		if r.broken == healthy || r.broken == interruptedBefore {
			g.Expect(lines[r.id]).To(HavePrefix(string(migrate.WouldPrepare)), r.id)
		} else {
			g.Expect(lines[r.id]).To(HavePrefix(string(migrate.LeftAlone)), r.id)
		}
	}
	g.Expect(lines["runtime-00"]).To(ContainSubstring("there is no IAS application named runtime-00"))
	g.Expect(lines["runtime-03"]).To(ContainSubstring("2 IAS applications are named runtime-03"))
	g.Expect(lines["runtime-05"]).To(ContainSubstring("is missing on the runtime"))
	g.Expect(lines["runtime-08"]).To(ContainSubstring("matches 0 of IAS application"))
	g.Expect(got).To(ContainSubstring("50 runtimes of eventing-auth-manager: 40 would prepare, 10 left alone"))
	for _, r := range runtimes {
		g.Expect(exists(ctx, s, composite(r.id))).To(BeFalse(), "a dry run made EventingAuth %s", r.id)
		if r.broken != interruptedBefore {
			g.Expect(exists(ctx, s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: localstack.KCPNamespace, Name: r.id + "-ias"}})).To(BeFalse())
		}
	}

	// Prepared while the provider does not run yet; running again finds them
	// prepared and waiting for the provider.
	got, code = runMigrate(globalAccount)
	g.Expect(code).To(Equal(2), got)
	g.Expect(got).To(ContainSubstring("40 prepared, 10 left alone"))
	got, code = runMigrate(globalAccount)
	g.Expect(code).To(Equal(2), got)
	g.Expect(got).To(ContainSubstring("40 waiting, 10 left alone"))
	g.Expect(outcomes(got)["runtime-20"]).To(ContainSubstring("prepared; waiting for IASApplication runtime-20 to become Ready"))
	for _, r := range runtimes {
		if r.broken == healthy || r.broken == interruptedBefore {
			xr := composite(r.id)
			g.Expect(s.Kube.Get(ctx, client.ObjectKeyFromObject(xr), xr)).To(Succeed())
			g.Expect(xr.GetAnnotations()).To(HaveKeyWithValue(apis.AnnotationApplicationID, r.appID))
		}
	}

	// The provider runs: the kyma bridge makes an EventingAuth for every Kyma
	// CR, the ten left alone too, which the provider serves with apps and
	// secrets of its own. The runtimes are finished once it shows them Ready:
	// the prepared ones with the credentials they hold, those it serves itself
	// with its own once their Secrets are labelled for it, but for the two
	// whose IASApplication finds two apps of their name.
	g.Expect(s.StartProvider(ctx)).To(Succeed())
	g.Eventually(func(g Gomega) {
		for _, r := range runtimes {
			g.Expect(exists(ctx, s, composite(r.id))).To(BeTrue(), r.id)
		}
	}, 2*time.Minute, time.Second).Should(Succeed())
	got, code = runMigrate("--wait=6m", globalAccount)
	g.Expect(code).To(Equal(2), got)
	g.Expect(got).To(ContainSubstring("48 completed, 2 left alone"))
	g.Expect(outcomes(got)["runtime-03"]).To(ContainSubstring("IASApplication runtime-03 says: "))

	for _, r := range runtimes {
		old := oldEventingAuth(r.id)
		oldErr := s.Kube.Get(ctx, client.ObjectKeyFromObject(old), old)
		switch r.broken {
		case twoApps:
			// Left alone: eventing-auth-manager's object stays for a person to look at.
			g.Expect(oldErr).NotTo(HaveOccurred(), r.id)
			g.Expect(old.GetFinalizers()).To(ContainElement(migrate.OperatorFinalizer))
			continue
		case appMissing, secretMissing, secretDiffers:
			// Served by the provider with credentials of its own, now on the runtime.
			g.Expect(kerrors.IsNotFound(oldErr)).To(BeTrue(), "%s: eventing-auth-manager's EventingAuth is still there: %v", r.id, oldErr)
			g.Expect(s.Sim.AppsNamed(r.id)).To(HaveLen(1), "%s: a second app", r.id)
			expectOnRuntimeOf(g, ctx, s, r.id)
			continue
		}
		g.Expect(kerrors.IsNotFound(oldErr)).To(BeTrue(), "%s: eventing-auth-manager's EventingAuth is still there: %v", r.id, oldErr)
		app := &iasv1alpha1.IASApplication{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: r.id}, app)).To(Succeed())
		g.Expect(meta.GetExternalName(app)).To(Equal(r.appID), r.id)
		apps := s.Sim.AppsNamed(r.id)
		g.Expect(apps).To(HaveLen(1), "%s: a second app", r.id)
		g.Expect(secretIDs(apps[0])).To(Equal(r.secretIDs), "%s: the app's secrets changed", r.id)
		onRuntime := &corev1.Secret{}
		g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: r.id, Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed())
		g.Expect(onRuntime.Data).To(Equal(r.data), "%s: the runtime's credentials changed", r.id)
		conn := &corev1.Secret{}
		g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: r.id + "-ias"}, conn)).To(Succeed())
		g.Expect(metav1.GetControllerOf(conn)).NotTo(BeNil())
		g.Expect(metav1.GetControllerOf(conn).UID).To(Equal(app.GetUID()))
	}

	// Running again finds only the runtimes left alone.
	got, code = runMigrate(globalAccount)
	g.Expect(code).To(Equal(2), got)
	g.Expect(got).To(ContainSubstring("2 runtimes of eventing-auth-manager: 2 left alone"))

	// The normal lifecycle: a migrated runtime's Kyma CR deleted takes its
	// Secret and its app with it.
	gone := runtimes[20]
	g.Expect(s.Kube.Delete(ctx, named(eventingauth.KymaKind, gone.id))).To(Succeed())
	g.Eventually(func(g Gomega) {
		err := s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: gone.id, Name: "eventing-webhook-auth"}, &corev1.Secret{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "the Secret is still on the runtime: %v", err)
		g.Expect(s.Sim.AppsNamed(gone.id)).To(BeEmpty())
		err = s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: gone.id + "-ias"}, &corev1.Secret{})
		g.Expect(kerrors.IsNotFound(err)).To(BeTrue(), "the connection Secret is left: %v", err)
	}, 3*time.Minute, time.Second).Should(Succeed())
}

// seedOldRuntime makes a runtime as eventing-auth-manager left it: its Kyma CR,
// kubeconfig, IAS app with a secret marked eventing-auth-manager, the Secret on
// the runtime, and the operator's EventingAuth with its finalizer.
func seedOldRuntime(ctx context.Context, s *localstack.Stack, proxy *runtimeProxy, r *oldRuntime) error {
	if err := s.RuntimeKube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.id}}); err != nil {
		return err
	}
	if err := s.Kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig-" + r.id, Namespace: localstack.KCPNamespace},
		Data: map[string][]byte{"config": proxy.kubeconfig(r.id)}}); err != nil {
		return err
	}
	kyma, err := s.CreateKyma(ctx, r.id, "ga-migration")
	if err != nil {
		return err
	}
	secret := iassim.Secret{Description: migrate.OperatorSecretDescription, AuthorizationScopes: []string{"oAuth"}}
	app := iassim.App{Name: r.id, DisplayName: r.id, Secrets: []iassim.Secret{secret}}
	if r.broken != appMissing {
		r.appID = s.Sim.AddApp(app)
	} else {
		// The runtime holds credentials of an app that is gone.
		r.appID = s.Sim.AddApp(app)
		defer s.Sim.DeleteApp(r.appID)
	}
	if r.broken == twoApps {
		s.Sim.AddApp(app)
	}
	stored, _ := s.Sim.App(r.appID)
	r.secretIDs = secretIDs(stored)
	r.data = map[string][]byte{
		"client_id": []byte(stored.ClientID), "client_secret": []byte(stored.Secrets[0].Value),
		"token_url": []byte(s.Sim.URL + "/oauth2/token"), "certs_url": []byte(s.Sim.URL + "/oauth2/certs"),
	}
	if r.broken == secretDiffers {
		r.data["client_secret"] = []byte("not-the-secret-in-ias")
	}
	if r.broken != secretMissing {
		if err := s.RuntimeKube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.id, Name: "eventing-webhook-auth"},
			Type: corev1.SecretTypeOpaque, Data: r.data}); err != nil {
			return err
		}
	}
	if r.broken == interruptedBefore {
		if err := s.Kube.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: localstack.KCPNamespace, Name: r.id + "-ias"},
			Type: "connection.crossplane.io/v1alpha1", Data: r.data}); err != nil {
			return err
		}
	}
	old := oldEventingAuth(r.id)
	old.SetFinalizers([]string{migrate.OperatorFinalizer})
	old.SetOwnerReferences([]metav1.OwnerReference{*metav1.NewControllerRef(kyma, eventingauth.KymaKind)})
	if err := s.Kube.Create(ctx, old); err != nil {
		return err
	}
	old.Object["status"] = map[string]any{
		"state":          "Ready",
		"iasApplication": map[string]any{"name": r.id, "uuid": r.appID},
		"secret":         map[string]any{"clusterId": r.id, "namespacedName": "kyma-system/eventing-webhook-auth"},
	}
	return s.Kube.Status().Update(ctx, old)
}

func oldEventingAuth(id string) *unstructured.Unstructured {
	return named(migrate.OperatorEventingAuthGroupVersionKind, id)
}

func composite(id string) *unstructured.Unstructured {
	return named(eventingauth.Kind, id)
}

// named is the object of that kind named id in kcp-system.
func named(gvk schema.GroupVersionKind, id string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(localstack.KCPNamespace)
	u.SetName(id)
	return u
}

func exists(ctx context.Context, s *localstack.Stack, o client.Object) bool {
	return s.Kube.Get(ctx, client.ObjectKeyFromObject(o), o) == nil
}

func secretIDs(a iassim.App) []string {
	var ids []string
	for _, s := range a.Secrets {
		ids = append(ids, s.ID)
	}
	return ids
}

// outcomes maps each runtime of the command's table to "<outcome> <detail>".
func outcomes(out string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		id, rest, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(id, "runtime-") {
			m[id] = strings.TrimSpace(rest)
		}
	}
	return m
}

// expectOnRuntimeOf checks that runtime id holds what its connection Secret
// holds.
func expectOnRuntimeOf(g Gomega, ctx context.Context, s *localstack.Stack, id string) {
	conn, onRuntime := &corev1.Secret{}, &corev1.Secret{}
	g.Expect(s.Kube.Get(ctx, client.ObjectKey{Namespace: localstack.KCPNamespace, Name: id + "-ias"}, conn)).To(Succeed(), id)
	g.Expect(s.RuntimeKube.Get(ctx, client.ObjectKey{Namespace: id, Name: "eventing-webhook-auth"}, onRuntime)).To(Succeed(), id)
	g.Expect(onRuntime.Data).To(Equal(conn.Data), "%s: the runtime does not hold the provider's credentials", id)
}
