package v1alpha1

import (
	"crypto/sha256"
	"fmt"
	"slices"
)

// DataHash digests Secret data as status.atProvider.dataHash reports it: it tells
// a change, and lets an IASApplication tell that a runtime carries its current
// credentials, without showing the data.
func DataHash(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}
