package iasapplication

import (
	"github.com/kyma-project/provider-eventing-auth/apis/ias/v1alpha1"
	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// drift lists the patches that bring the app in IAS back to the spec.
func drift(cr *v1alpha1.IASApplication, app *ias.Application) []ias.Patch {
	var p []ias.Patch
	if app.Name != cr.AppName() {
		p = append(p, ias.Patch{Path: ias.PathName, Value: cr.AppName()})
	}
	if app.DisplayName != cr.AppDisplayName() {
		p = append(p, ias.Patch{Path: ias.PathDisplayName, Value: cr.AppDisplayName()})
	}
	// An adopted app gets its owner recorded: it is this resource's from now
	// on (or the hand-over's target's).
	if owner, err := wantedOwner(cr); err == nil && app.Description != ownedDescription(owner) {
		p = append(p, ias.Patch{Path: ias.PathDescription, Value: ownedDescription(owner)})
	}
	if app.SSOType != ias.SSOTypeOIDC {
		p = append(p, ias.Patch{Path: ias.PathSSOType, Value: ias.SSOTypeOIDC})
	}
	return p
}
