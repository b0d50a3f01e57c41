package localstack

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The package runtime: Crossplane core runs with --package-runtime=External, so
// it installs packages but starts nothing. packageRuntime does that part here:
// each active FunctionRevision gets its function, from the binary in its
// package's runtime image, as a local process and its
// status.endpoint, and the active revision of the provider's package runs as a
// local process from the binary in that package's runtime image. A new active
// provider revision (an upgrade) replaces the process.
type packageRuntime struct {
	s    *Stack
	ca   *ca
	log  io.Writer
	done chan struct{}

	mu sync.Mutex
	// providerAllowed gates the provider (Options.ProviderLater).
	providerAllowed bool
	// replicas run the provider of providerRev: the pods of its Deployment.
	replicas    []*providerReplica
	providerRev string
	// backends are the replicas the watcher's Service stand-in sends to.
	backends       atomic.Pointer[[]*providerReplica]
	serviceStarted bool
	restarts       int
	functions      map[string]functionProcess // by function name
}

// restartDelay is how long an exited provider stays down before it is restarted.
const restartDelay = 2 * time.Second

// ProviderRepository is the provider package's repository.
const ProviderRepository = "kyma-project/provider-eventing-auth"

func (s *Stack) startPackageRuntime(ca *ca) error {
	f, err := os.Create(filepath.Join(s.Work, "package-runtime.log"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &packageRuntime{s: s, ca: ca, log: f, done: make(chan struct{}), functions: map[string]functionProcess{}, providerAllowed: !s.o.ProviderLater}
	s.pkgRuntime = r
	go func() {
		defer close(r.done)
		defer f.Close() //nolint:errcheck // A log.
		for ctx.Err() == nil {
			if err := r.sync(ctx); err != nil && ctx.Err() == nil {
				fmt.Fprintf(f, "%s %v\n", time.Now().Format(time.RFC3339), err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	s.closers = append(s.closers, func() { cancel(); <-r.done })
	return nil
}

// sync brings the processes in line with the active revisions.
func (r *packageRuntime) sync(ctx context.Context) error {
	var errs []error
	for kind, run := range map[string]func(context.Context, *unstructured.Unstructured) error{
		"FunctionRevision": r.function,
		"ProviderRevision": r.providerRevision,
	} {
		revs := &unstructured.UnstructuredList{}
		revs.SetAPIVersion("pkg.crossplane.io/v1")
		revs.SetKind(kind + "List")
		if err := r.s.Kube.List(ctx, revs); err != nil {
			errs = append(errs, err)
			continue
		}
		for i := range revs.Items {
			errs = append(errs, run(ctx, &revs.Items[i]))
		}
	}
	return errors.Join(errs...)
}

// function runs the function of an active revision and records its endpoint.
func (r *packageRuntime) function(ctx context.Context, rev *unstructured.Unstructured) error {
	if state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); state != "Active" {
		return nil
	}
	pkg, _, _ := unstructured.NestedString(rev.Object, "spec", "image")
	fn, err := repositoryBase(pkg)
	if err != nil {
		return err
	}
	image, _, _ := unstructured.NestedString(rev.Object, "status", "resolvedImage")
	if image == "" {
		image = r.s.Mirrored(pkg)
	}
	fp, err := r.functionProcess(ctx, fn, image)
	if err != nil {
		return err
	}
	return r.setStatus(ctx, rev, filepath.Join(r.s.Work, "certs", fn), map[string]string{"endpoint": fp.addr}, fp.p)
}

// setStatus records what core waits for from a package runtime: the Secret
// with the revision's TLS server certificate (core reads it before it
// installs a package's objects), for a function its endpoint, and whether the
// process that runs the revision is up (condition RuntimeHealthy; left alone
// while no process runs it).
func (r *packageRuntime) setStatus(ctx context.Context, rev *unstructured.Unstructured, certs string, fields map[string]string, p *process) error {
	name := rev.GetName() + "-tls-server"
	// The status names the Secret only once it was created.
	if got, _, _ := unstructured.NestedString(rev.Object, "status", "tlsServerSecretName"); got != name {
		if err := r.createTLSSecret(ctx, name, certs); err != nil {
			return err
		}
	}
	fields["tlsServerSecretName"] = name
	changed := false
	for k, v := range fields {
		if got, _, _ := unstructured.NestedString(rev.Object, "status", k); got != v {
			if err := unstructured.SetNestedField(rev.Object, v, "status", k); err != nil {
				return err
			}
			changed = true
		}
	}
	if p != nil {
		// No empty message: core writes the revision's status back from its
		// typed form, which drops an empty message, and the two writers would
		// otherwise take turns rewriting the revision many times a second.
		c := map[string]any{"type": "RuntimeHealthy", "status": "True", "reason": "HealthyPackageRevision"}
		if !p.Running() {
			c["status"], c["reason"], c["message"] = "False", "UnhealthyPackageRevision", p.name+" exited; its log is "+p.log
		}
		changed = setCondition(rev, c) || changed
	}
	if !changed {
		return nil
	}
	// A conflict with core's own status write is retried on the next sync.
	return client.IgnoreNotFound(r.s.Kube.Status().Update(ctx, rev))
}

// createTLSSecret writes the certificates in dir into Secret name.
func (r *packageRuntime) createTLSSecret(ctx context.Context, name, dir string) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: CrossplaneNamespace}, Data: map[string][]byte{}}
	for _, f := range []string{"tls.crt", "tls.key", "ca.crt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		secret.Data[f] = b
	}
	if err := r.s.Kube.Create(ctx, secret); err != nil && !kerrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// functionProcess is a function running at addr.
type functionProcess struct {
	p    *process
	addr string
}

// functionProcess starts a function over mTLS once, from the binary in its
// package's runtime image.
func (r *packageRuntime) functionProcess(ctx context.Context, fn, image string) (functionProcess, error) {
	if fp, ok := r.functions[fn]; ok {
		return fp, nil
	}
	bin := filepath.Join(r.s.Work, "functions", fn)
	if _, err := os.Stat(bin); err != nil {
		if err := r.extractBinary(ctx, image, functionBinary, bin); err != nil {
			return functionProcess{}, fmt.Errorf("cannot take function %s out of %s: %w", fn, image, err)
		}
	}
	dir := filepath.Join(r.s.Work, "certs", fn)
	if err := r.ca.writeCerts(dir, fn); err != nil {
		return functionProcess{}, err
	}
	addr, err := FreeAddr()
	if err != nil {
		return functionProcess{}, err
	}
	p, err := r.s.start(fn, append(imageEnv(bin), "TLS_SERVER_CERTS_DIR="+dir), bin, append([]string{"--address=" + addr}, r.s.o.FunctionArgs[fn]...)...)
	if err != nil {
		return functionProcess{}, err
	}
	if err := waitListening(ctx, p, addr); err != nil {
		return functionProcess{}, err
	}
	r.functions[fn] = functionProcess{p: p, addr: addr}
	return r.functions[fn], nil
}

// providerRevision runs the provider of the active revision of its package,
// replacing the process of a previous revision.
func (r *packageRuntime) providerRevision(ctx context.Context, rev *unstructured.Unstructured) error {
	pkg, _, _ := unstructured.NestedString(rev.Object, "spec", "image")
	ref, err := name.ParseReference(pkg)
	if err != nil || ref.Context().RepositoryStr() != ProviderRepository {
		return err
	}
	if state, _, _ := unstructured.NestedString(rev.Object, "spec", "desiredState"); state != "Active" {
		return nil
	}
	certs := filepath.Join(r.s.Work, "certs", "provider")
	if _, err := os.Stat(filepath.Join(certs, "tls.crt")); err != nil {
		if err := r.ca.writeCerts(certs, "provider"); err != nil {
			return err
		}
	}
	p, err := r.providerProcess(ctx, rev, pkg)
	return errors.Join(err, r.setStatus(ctx, rev, certs, map[string]string{}, p))
}

// providerProcess runs the provider of an active revision as its
// Deployment's pods, replacing the processes of a previous revision, and
// restarts a replica that exited, as the kubelet restarts a container. It
// returns the first replica's process (the revision's health); nil while the
// provider is held back.
func (r *packageRuntime) providerProcess(ctx context.Context, rev *unstructured.Unstructured, pkg string) (*process, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.providerAllowed {
		return nil, nil
	}
	if r.providerRev == rev.GetName() && len(r.replicas) > 0 {
		for _, rp := range r.replicas {
			if rp.p.Running() || time.Since(rp.exited) < restartDelay {
				continue
			}
			// Counted, so tests see it.
			r.restarts++
			fmt.Fprintf(r.log, "%s restarting the provider of %s (restart %d); the last log is %s\n", time.Now().Format(time.RFC3339), rev.GetName(), r.restarts, rp.p.log)
			if err := r.startReplica(rp, fmt.Sprintf("-restart-%d", r.restarts)); err != nil {
				return nil, err
			}
		}
		return r.replicas[0].p, nil
	}
	image, _, _ := unstructured.NestedString(rev.Object, "status", "resolvedImage")
	if image == "" {
		image = r.s.Mirrored(pkg)
	}
	bin := filepath.Join(r.s.Work, "revisions", rev.GetName(), "provider")
	if _, err := os.Stat(bin); err != nil {
		if err := r.extractBinary(ctx, image, providerBinary, bin); err != nil {
			return nil, fmt.Errorf("cannot take the provider binary out of %s: %w", image, err)
		}
	}
	kubeconfig, err := r.providerIdentity(ctx, rev, image)
	if err != nil {
		return nil, fmt.Errorf("cannot give the provider of %s its ServiceAccount: %w", rev.GetName(), err)
	}
	replicas, err := r.deployment(ctx, rev, image, bin, kubeconfig)
	if err != nil {
		return nil, err
	}
	for _, rp := range r.replicas {
		rp.p.stop()
	}
	r.replicas, r.providerRev = replicas, rev.GetName()
	for _, rp := range replicas {
		if err := r.startReplica(rp, ""); err != nil {
			return nil, err
		}
	}
	return r.replicas[0].p, nil
}

// setCondition puts a condition into an object's status.conditions; the
// transition time moves only when the status does. It tells whether anything
// changed.
func setCondition(u *unstructured.Unstructured, c map[string]any) bool {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	c["lastTransitionTime"] = metav1.Now().UTC().Format(time.RFC3339)
	for i, e := range cs {
		old, ok := e.(map[string]any)
		if !ok || old["type"] != c["type"] {
			continue
		}
		if sameFields(old, c, "status", "reason", "message") {
			return false
		}
		if old["status"] == c["status"] {
			c["lastTransitionTime"] = old["lastTransitionTime"]
		}
		cs[i] = c
		return unstructured.SetNestedSlice(u.Object, cs, "status", "conditions") == nil
	}
	return unstructured.SetNestedSlice(u.Object, append(cs, c), "status", "conditions") == nil
}

// sameFields tells whether a and b hold the same strings at keys; a missing
// key reads as "", as it does to core (fields with omitempty).
func sameFields(a, b map[string]any, keys ...string) bool {
	for _, k := range keys {
		x, _ := a[k].(string)
		y, _ := b[k].(string)
		if x != y {
			return false
		}
	}
	return true
}

// Where the runtime images hold their binaries (hack/crossplane/image).
const (
	providerBinary = "usr/local/bin/provider"
	functionBinary = "usr/local/bin/function"
)

// imageEnv is the environment the runtime image of the binary at bin sets
// (its config's Env, as a container runtime sets it), saved beside it.
func imageEnv(bin string) []string {
	b, err := os.ReadFile(bin + ".env")
	if err != nil {
		return nil
	}
	return strings.FieldsFunc(string(b), func(c rune) bool { return c == '\n' })
}

// extractBinary writes the binary at path in a package's runtime image, and
// the image's environment beside it (imageEnv).
func (r *packageRuntime) extractBinary(ctx context.Context, image, path, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	config, err := exec.CommandContext(ctx, filepath.Join(r.s.o.Tools, "crane"), "config", "--platform", "linux/"+runtime.GOARCH, image).Output()
	if err != nil {
		return fmt.Errorf("crane config: %w", err)
	}
	var c struct {
		Config struct{ Env []string } `json:"config"`
	}
	if err := json.Unmarshal(config, &c); err != nil {
		return fmt.Errorf("the config of %s: %w", image, err)
	}
	if err := os.WriteFile(to+".env", []byte(strings.Join(c.Config.Env, "\n")), 0o644); err != nil {
		return err
	}
	// A package is an index of one image per platform: this machine's runs here.
	export := exec.CommandContext(ctx, filepath.Join(r.s.o.Tools, "crane"), "export", "--platform", "linux/"+runtime.GOARCH, image, "-")
	out, err := export.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	export.Stderr = &stderr
	if err := export.Start(); err != nil {
		return err
	}
	// Written aside and renamed, so a binary at to is always whole.
	found, copyErr := copyFromTar(out, path, to+".part")
	_, _ = io.Copy(io.Discard, out)
	if err := export.Wait(); err != nil {
		return fmt.Errorf("crane export: %v: %s", err, stderr.String())
	}
	if copyErr != nil {
		return copyErr
	}
	if !found {
		return fmt.Errorf("the image has no %s", path)
	}
	return os.Rename(to+".part", to)
}

// copyFromTar writes the file at name in a tar stream to a new executable.
func copyFromTar(stream io.Reader, name, to string) (bool, error) {
	tr := tar.NewReader(stream)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if strings.TrimPrefix(h.Name, "/") != name {
			continue
		}
		f, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
		if err != nil {
			return false, err
		}
		if _, err := io.Copy(f, tr); err != nil {
			_ = f.Close()
			return false, err
		}
		return true, f.Close()
	}
}

// repositoryBase is the last element of a package's repository, e.g.
// function-auto-ready.
func repositoryBase(pkg string) (string, error) {
	ref, err := name.ParseReference(pkg)
	if err != nil {
		return "", err
	}
	return path.Base(ref.Context().RepositoryStr()), nil
}

// allowProvider lets the provider start (Options.ProviderLater) and waits until
// it runs.
func (r *packageRuntime) allowProvider(ctx context.Context) error {
	r.mu.Lock()
	r.providerAllowed = true
	r.mu.Unlock()
	for {
		if p := r.current(); p != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(filepath.Join(r.s.Work, "package-runtime.log"))
			return fmt.Errorf("no active revision of the provider's package ran: %w\n%s", ctx.Err(), b)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// providerRestarts counts the restarts of an exited provider.
func (r *packageRuntime) providerRestarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// current is the provider's process, the leader's of several replicas; nil
// before it starts.
func (r *packageRuntime) current() *process {
	r.mu.Lock()
	replicas := slices.Clone(r.replicas)
	r.mu.Unlock()
	if len(replicas) == 0 {
		return nil
	}
	if len(replicas) > 1 {
		if rp := r.leader(replicas); rp != nil {
			return rp.p
		}
	}
	return replicas[0].p
}
