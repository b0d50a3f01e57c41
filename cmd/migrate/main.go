// Command migrate hands the runtimes of eventing-auth-manager over to
// provider-eventing-auth without changing any runtime's credentials. See
// docs/migration.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kyma-project/provider-eventing-auth/apis"
	iasv1alpha1 "github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/apis/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias/tenantconfig"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kymaruntime"
	"github.com/kyma-project/provider-eventing-auth/internal/migrate"
)

func main() {
	var (
		namespace      = flag.String("namespace", "kcp-system", "Namespace of the Kyma CRs, eventing-auth-manager's EventingAuths and the kubeconfig Secrets.")
		providerConfig = flag.String("provider-config", "default", "The ClusterProviderConfig whose IAS tenant the provider uses.")
		signs          = migrate.DefaultOperatorSigns()
		operator       = flag.String("operator-deployment", signs.Namespace+"/"+signs.Deployment, "eventing-auth-manager's Deployment (namespace/name), as its kustomize names it; the migration refuses to run while it has replicas, while its pods run, or while its leader Lease (--operator-lease, in the same namespace) is renewed.")
		lease          = flag.String("operator-lease", signs.LeaderLease, "eventing-auth-manager's leader election Lease, in the Deployment's namespace.")
		podLabels      = flag.String("operator-pod-labels", labelsFlag(signs.PodLabels), "Labels (k=v,...) of eventing-auth-manager's pods, in the Deployment's namespace.")
		image          = flag.String("operator-image", signs.Image, "Name of eventing-auth-manager's image (the last element of its repository): a Deployment or pod running it, in any namespace, is the operator whatever its names.")
		neverRan       = flag.Bool("operator-never-ran", false, "No eventing-auth-manager ever ran on this cluster: finding none of it is then no reason to refuse. The migration still refuses, and stops, while one runs.")
		globalAccount  = flag.String(migrate.OperatorGlobalAccountFlag, "", "The global account eventing-auth-manager sent with every app (its own --ias-global-account-id; empty if it ran without). Read from its Deployment while that exists; required once it is gone. The ClusterProviderConfig's globalAccount is set to it where empty.")
		skipCheck      = flag.Bool("skip-operator-check", false, "Run without looking whether eventing-auth-manager runs, before or during the run; only once it is removed for good (docs/migration.md).")
		dryRun         = flag.Bool("dry-run", false, "Print what would be done per runtime and change nothing.")
		wait           = flag.Duration("wait", 0, "How long to wait for the provider to show prepared runtimes Ready and finish them; 0: prepare, report, and leave finishing to a later run.")
		back           = flag.Bool("back", false, "The way back: hand the runtimes the provider serves back to eventing-auth-manager, changing no runtime's Secret and deleting no IAS app (docs/migration.md, \"Going back\"). Remove the EventingAuth Configuration first, with the provider still running; start eventing-auth-manager after.")
		plainHTTP      = flag.Bool("test-plain-http-loopback", false, "For tests only: take a tenant URL and kubeconfigs with plain http to a loopback host.")
		runtimeTimeout = flag.Duration("runtime-timeout", kymaruntime.DefaultTimeout, "Timeout of each call to a Kyma runtime's API server.")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ns, name, ok := strings.Cut(*operator, "/")
	if !ok || ns == "" || name == "" {
		os.Exit(fail("--operator-deployment %q is not namespace/name", *operator))
	}
	labels, err := parseLabels(*podLabels)
	if err != nil {
		os.Exit(fail("--operator-pod-labels: %v", err))
	}
	signs.Namespace, signs.Deployment, signs.LeaderLease, signs.PodLabels, signs.Image, signs.NeverRan = ns, name, *lease, labels, *image, *neverRan
	// Where the user named the operator's place, nothing found there is its removal.
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "operator-deployment", "operator-lease", "operator-pod-labels", "operator-image":
			signs.Named = true
		}
	})
	var ga *string
	flag.Visit(func(f *flag.Flag) {
		if f.Name == migrate.OperatorGlobalAccountFlag {
			ga = globalAccount
		}
	})
	os.Exit(run(ctx, options{namespace: *namespace, providerConfig: *providerConfig, operator: signs, globalAccount: ga, skipCheck: *skipCheck,
		dryRun: *dryRun, wait: *wait, runtimeTimeout: *runtimeTimeout, plainHTTP: *plainHTTP, back: *back}))
}

// options are the command's flags.
type options struct {
	namespace, providerConfig string
	operator                  migrate.OperatorSigns
	globalAccount             *string
	skipCheck, dryRun         bool
	wait, runtimeTimeout      time.Duration
	plainHTTP                 bool
	back                      bool
}

func run(ctx context.Context, o options) int {
	namespace, providerConfig, operator, globalAccount := o.namespace, o.providerConfig, o.operator, o.globalAccount
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fail("cannot get the management cluster's config: %v", err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = apis.AddToScheme(scheme)
	// The way back restores eventing-auth-manager's CRD.
	_ = apiextensionsv1.AddToScheme(scheme)
	kube, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fail("cannot create a client of the management cluster: %v", err)
	}
	if globalAccount == nil && !o.back {
		v, found, err := migrate.OperatorGlobalAccount(ctx, kube, operator)
		switch {
		case err != nil:
			return fail("%v", err)
		case !found:
			return fail("cannot read eventing-auth-manager's --%s: its Deployment %s/%s is gone. Pass --%s with the value it ran with (--%s= if it ran without one), so that new runtimes get the apps it would have made",
				migrate.OperatorGlobalAccountFlag, operator.Namespace, operator.Deployment, migrate.OperatorGlobalAccountFlag, migrate.OperatorGlobalAccountFlag)
		}
		globalAccount = &v
	}
	// The tenant is resolved as the provider resolves it for an IASApplication.
	ref := &iasv1alpha1.IASApplication{ObjectMeta: metav1.ObjectMeta{Namespace: namespace}}
	ref.SetProviderConfigReference(&xpv2.ProviderConfigReference{Kind: v1alpha1.ClusterProviderConfigKind, Name: providerConfig})
	tenant, err := tenantconfig.Resolver{Certs: ias.NewClientCerts(1), KymaNamespace: namespace, PlainHTTPLoopback: o.plainHTTP}.Resolve(ctx, kube, ref)
	if err != nil {
		return fail("cannot resolve the IAS tenant: %v", err)
	}
	iasClient, err := ias.NewPool(ias.PoolOptions{}).Client(tenant.Tenant)
	if err != nil {
		return fail("cannot create an IAS client: %v", err)
	}
	out := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(out, "RUNTIME\tOUTCOME\tDETAIL")
	counts := map[migrate.Outcome]int{}
	migration, what := migrate.Run, "eventing-auth-manager"
	if o.back {
		migration, what = migrate.Back, "the provider, handed back to eventing-auth-manager"
	}
	results, err := migration(ctx, migrate.Options{
		Kube: kube, IAS: iasClient, Namespace: namespace, Operator: operator, SkipOperatorCheck: o.skipCheck, DryRun: o.dryRun, Wait: o.wait,
		Runtimes:      kymaruntime.NewClients(kymaruntime.Options{Timeout: o.runtimeTimeout, PlainHTTPLoopback: o.plainHTTP}),
		GlobalAccount: globalAccount, ProviderConfig: providerConfig,
		Said: func(s string) { fmt.Println(s) },
		Report: func(r migrate.Result) {
			counts[r.Outcome]++
			fmt.Fprintf(out, "%s\t%s\t%s\n", r.Runtime, r.Outcome, r.Detail)
		},
	})
	_ = out.Flush()
	if err != nil {
		return fail("%v", err)
	}
	var summary []string
	for _, o := range []migrate.Outcome{migrate.Completed, migrate.WouldFinish, migrate.Prepared, migrate.WouldPrepare, migrate.Waiting, migrate.LeftAlone} {
		if counts[o] > 0 {
			summary = append(summary, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	fmt.Printf("%d runtimes of %s: %s\n", len(results), what, strings.Join(summary, ", "))
	switch {
	case counts[migrate.LeftAlone] > 0 && o.back:
		fmt.Println("Runtimes left alone are not handed back; fix what their line says and run again.")
		return 2
	case counts[migrate.LeftAlone] > 0:
		fmt.Println("Runtimes left alone keep eventing-auth-manager's EventingAuth; fix what their line says and run again.")
		return 2
	case counts[migrate.Prepared]+counts[migrate.Waiting] > 0:
		fmt.Println("Run again (with --wait) once the provider runs, to finish the prepared runtimes.")
		return 3
	}
	return 0
}

// labelsFlag writes labels as --operator-pod-labels takes them.
func labelsFlag(l map[string]string) string {
	out := make([]string, 0, len(l))
	for _, k := range slices.Sorted(maps.Keys(l)) {
		out = append(out, k+"="+l[k])
	}
	return strings.Join(out, ",")
}

// parseLabels reads k=v,... .
func parseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "migrate: "+format+"\n", a...)
	return 1
}
