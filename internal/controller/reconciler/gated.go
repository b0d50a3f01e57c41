package reconciler

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// How often and how long a gated setup waits for the REST mapper to know its
// kinds once their CRDs are established. MappingPoll is also how soon a
// controller that met an established kind not yet mapped looks again.
const (
	MappingPoll = 250 * time.Millisecond
	mappingWait = 2 * time.Minute
)

// Gated registers setup to run once the CRDs of the given kinds are
// established (safe-start); a failure goes to SetupFailed.
//
// The gate opens on the CRD's Established condition, but the API server's
// discovery, which mapper reads, can lag behind it: a CRD that appears while
// the provider runs (a ManagedResourceActivationPolicy activating it) would
// then fail the setup with "no matches for kind". So setup waits until mapper
// knows every kind.
func (o Options) Gated(mapper meta.RESTMapper, name string, setup func() error, needs ...schema.GroupVersionKind) {
	o.Gate.Register(func() {
		err := waitForMappings(context.Background(), mapper, MappingPoll, mappingWait, needs...)
		if err == nil {
			err = setup()
		}
		if err == nil {
			return
		}
		err = fmt.Errorf("cannot set up the %s controller: %w", name, err)
		if o.SetupFailed == nil {
			panic(err)
		}
		o.SetupFailed(err)
	}, needs...)
}

// waitForMappings waits until mapper maps every kind; other errors than an
// unknown kind end the wait at once.
func waitForMappings(ctx context.Context, mapper meta.RESTMapper, interval, timeout time.Duration, kinds ...schema.GroupVersionKind) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(context.Context) (bool, error) {
		for _, gvk := range kinds {
			if _, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				if meta.IsNoMatchError(err) {
					last = err
					return false, nil
				}
				return false, err
			}
		}
		return true, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (after %s: %v)", last, timeout, err)
	}
	return err
}
