package iasapplication

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
)

// TestUnchangedCheckWritesNothing: an hourly check that finds the published
// secret as the status records it leaves the status as it was, so that a
// Ready app costs the API server no write; the next check is an hour after
// this one all the same.
func TestUnchangedCheckWritesNothing(t *testing.T) {
	cr := newCR(withExternalName(appID), publishedAgo("s1", 2*time.Hour), func(cr *v1alpha1.IASApplication) {
		cr.Status.AtProvider.SecretHint = "abcd"
		cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: at.Add(-61 * time.Minute)}
	})
	w := world{steady: true, cr: cr, ias: oneApp(ourSecret("s1", "abcd")), conn: conn("abcd"), listedAgo: ptr.To(61 * time.Minute)}
	e, _ := w.external(t)
	before := cr.Status.AtProvider.DeepCopy()
	if _, err := e.Observe(context.Background(), cr); err != nil {
		t.Fatal(err)
	}
	if w.ias.reads != 2 {
		t.Fatalf("IAS reads %d, want the inventory and the secrets' listing", w.ias.reads)
	}
	if !cr.Status.AtProvider.SecretsCheckedAt.Equal(before.SecretsCheckedAt) {
		t.Errorf("secretsCheckedAt %v, want it left at %v", cr.Status.AtProvider.SecretsCheckedAt, before.SecretsCheckedAt)
	}
	if got := e.secrets.checks.last(cr, at, time.Hour); !got.Equal(at) {
		t.Errorf("remembered last check %v, want %v", got, at)
	}
}

// TestChecksSpreadAfterAStart: after a start, apps whose status says their
// check is overdue are checked at points spread over the next interval, each
// app at the same point every time it is asked.
func TestChecksSpreadAfterAStart(t *testing.T) {
	const apps, every = 3600, time.Hour
	c := newSecretChecks(every)
	perMinute := map[int]int{}
	for i := range apps {
		cr := newCR(func(cr *v1alpha1.IASApplication) {
			cr.UID = types.UID(fmt.Sprintf("uid-%d", i))
			cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: at.Add(-5 * every)}
		})
		last := c.last(cr, at, every)
		due := last.Add(every).Sub(at)
		if due < 0 || due >= every {
			t.Fatalf("app %d due in %v, want within the next %v", i, due, every)
		}
		if again := c.last(cr, at.Add(time.Minute), every); !again.Equal(last) {
			t.Fatalf("app %d: last check %v, then %v", i, last, again)
		}
		perMinute[int(due/time.Minute)]++
	}
	for m := range 60 {
		if n := perMinute[m]; n > 120 {
			t.Errorf("%d checks due in minute %d of the hour, want about %d", n, m, apps/60)
		}
	}
	// A status within the interval is taken as it is.
	cr := newCR(func(cr *v1alpha1.IASApplication) {
		cr.UID = "recent"
		cr.Status.AtProvider.SecretsCheckedAt = &metav1.Time{Time: at.Add(-10 * time.Minute)}
	})
	if got := c.last(cr, at, every); !got.Equal(at.Add(-10 * time.Minute)) {
		t.Errorf("recent status: last check %v", got)
	}
}
