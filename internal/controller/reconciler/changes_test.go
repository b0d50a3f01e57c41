package reconciler

import (
	"context"
	"errors"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"

	"github.com/kyma-project/provider-eventing-auth/apis/runtime/v1alpha1"
)

func TestTellChanges(t *testing.T) {
	boom := errors.New("boom")
	type rs = *v1alpha1.RuntimeSecret
	cases := map[string]struct {
		reason string
		call   func(context.Context, managed.TypedExternalClient[rs]) error
		err    error
		want   bool
	}{
		"CreateSucceeded": {
			reason: "a create that succeeded began a change",
			call: func(ctx context.Context, e managed.TypedExternalClient[rs]) error {
				_, err := e.Create(ctx, &v1alpha1.RuntimeSecret{})
				return err
			},
			want: true,
		},
		"CreateFailed": {
			reason: "a create that failed began none: its retry waits with other work",
			call: func(ctx context.Context, e managed.TypedExternalClient[rs]) error {
				_, err := e.Create(ctx, &v1alpha1.RuntimeSecret{})
				return err
			},
			err: boom,
		},
		"DeleteSucceeded": {
			reason: "a delete that succeeded began a change",
			call: func(ctx context.Context, e managed.TypedExternalClient[rs]) error {
				_, err := e.Delete(ctx, &v1alpha1.RuntimeSecret{})
				return err
			},
			want: true,
		},
		"DeleteFailed": {
			reason: "a delete that failed began none",
			call: func(ctx context.Context, e managed.TypedExternalClient[rs]) error {
				_, err := e.Delete(ctx, &v1alpha1.RuntimeSecret{})
				return err
			},
			err: boom,
		},
		"Update": {
			reason: "an update finishes in its own reconcile: nothing to come back for",
			call: func(ctx context.Context, e managed.TypedExternalClient[rs]) error {
				_, err := e.Update(ctx, &v1alpha1.RuntimeSecret{})
				return err
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			inner := managed.TypedExternalConnectorFn[rs](func(context.Context, rs) (managed.TypedExternalClient[rs], error) {
				return managed.TypedExternalClientFns[rs]{
					CreateFn: func(context.Context, rs) (managed.ExternalCreation, error) { return managed.ExternalCreation{}, tc.err },
					UpdateFn: func(context.Context, rs) (managed.ExternalUpdate, error) { return managed.ExternalUpdate{}, tc.err },
					DeleteFn: func(context.Context, rs) (managed.ExternalDelete, error) { return managed.ExternalDelete{}, tc.err },
				}, nil
			})
			ctx, changed := withChangeHint(context.Background())
			e, err := TellChanges[rs](inner).Connect(ctx, &v1alpha1.RuntimeSecret{})
			if err != nil {
				t.Fatalf("Connect(...): %v", err)
			}
			if err := tc.call(ctx, e); !errors.Is(err, tc.err) {
				t.Fatalf("%s\nerror %v, want %v", tc.reason, err, tc.err)
			}
			if changed() != tc.want {
				t.Errorf("%s\nchange begun: %t, want %t", tc.reason, changed(), tc.want)
			}
		})
	}
}
