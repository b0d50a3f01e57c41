package iasapplication

import (
	"slices"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"

	"github.com/kyma-project/provider-eventing-auth/apis"
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// takenByExternalName tells whether cr takes app now by its external name,
// set by hand or by a hand-over, rather than by name: cr's status records
// another app; or it records none (never observed, or lost: the update that
// records an adoption writes no status), cr took no app before (no record of
// inherited secrets) and app is not the one cr's own Create made (whose
// external name comes with crossplane-runtime's create-succeeded annotation).
func takenByExternalName(cr *v1alpha1.IASApplication, app *ias.Application) bool {
	switch at := cr.Status.AtProvider.ID; {
	case at == app.ID:
		return false
	case at != "":
		return true
	}
	if _, took := annotation(cr, apis.AnnotationInheritedSecrets); took {
		return false
	}
	return meta.GetExternalCreateSucceeded(cr).IsZero()
}

// inherit records the api secrets all of an app this resource has just taken;
// an app without any is recorded as taken all the same (an empty list).
func inherit(cr *v1alpha1.IASApplication, all []ias.APISecret) {
	ids := make([]string, 0, len(all))
	for _, s := range all {
		ids = append(ids, s.ID)
	}
	meta.AddAnnotations(cr, map[string]string{apis.AnnotationInheritedSecrets: strings.Join(ids, ",")})
	meta.RemoveAnnotations(cr, legacyKey(apis.AnnotationInheritedSecrets))
}

// inherited tells whether the api secret of the id came with the app.
func inherited(cr *v1alpha1.IASApplication, id string) bool {
	v, _ := annotation(cr, apis.AnnotationInheritedSecrets)
	return v != "" && slices.Contains(strings.Split(v, ","), id)
}

// madeHere are the secrets of ours that this resource made.
func madeHere(cr *v1alpha1.IASApplication, secrets []ias.APISecret) []ias.APISecret {
	return slices.DeleteFunc(slices.Clone(secrets), func(s ias.APISecret) bool { return inherited(cr, s.ID) })
}

// annotation reads cr's annotation key, or, if it has none, the same key where
// it was kept before (apis.LegacyAnnotationPrefix).
func annotation(cr *v1alpha1.IASApplication, key string) (string, bool) {
	if v, ok := cr.GetAnnotations()[key]; ok {
		return v, true
	}
	v, ok := cr.GetAnnotations()[legacyKey(key)]
	return v, ok
}

// legacyKey is key under apis.LegacyAnnotationPrefix.
func legacyKey(key string) string {
	return apis.LegacyAnnotationPrefix + strings.TrimPrefix(key, apis.AnnotationPrefix)
}
