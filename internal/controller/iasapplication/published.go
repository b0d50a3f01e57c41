package iasapplication

import (
	"context"
	"time"

	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
	"github.com/kyma-project/provider-eventing-auth/internal/secretmetrics"
)

// published lists, for the secret metrics, the published secret of every
// IASApplication in the manager's cache as its status records it. The objects
// are read where the cache holds them (kube.ReadCached): at thousands of
// resources every scrape would otherwise copy them all.
func published(cached kube.CachedObjects, now func() time.Time) secretmetrics.Source {
	return func(ctx context.Context) ([]secretmetrics.Published, error) {
		all, err := cached(ctx)
		if err != nil {
			return nil, err
		}
		scraped := now()
		out := make([]secretmetrics.Published, 0, len(all))
		for _, o := range all {
			cr, ok := o.(*v1alpha1.IASApplication)
			if !ok {
				continue
			}
			at := cr.Status.AtProvider
			if at.SecretID == "" {
				continue
			}
			p := secretmetrics.Published{}
			if at.SecretValidTo != nil {
				t := at.SecretValidTo.Time // a copy: the cached object is shared
				p.ValidTo = &t
			}
			p.RotationDue = due(at.SecretRotatesAt, scraped)
			for _, r := range at.Retiring {
				// DeleteAfter counts retireAfter from the successor's publication.
				p.Retiring = append(p.Retiring, secretmetrics.Retiring{
					Since: r.DeleteAfter.Add(-retireAfter(cr)), ForRuntimes: r.WaitingFor != ""})
			}
			out = append(out, p)
		}
		return out, nil
	}
}
