package iasapplication

import (
	"time"

	"k8s.io/utils/clock"

	"github.com/kyma-project/provider-eventing-auth/internal/recent"
)

// toldFor is how long a told message is remembered. Its keys name the day or
// the moment of what was told (a rejection's time, a certificate warning's
// date), so a day is all they need; expired ones are pruned as new ones come.
const toldFor = 25 * time.Hour

// toldOnce remembers which messages were told, so that one shared by many
// resources (a ProviderConfig's rejected credentials, its expiring
// certificate) becomes one event, not one per resource.
type toldOnce struct {
	clock clock.PassiveClock
	told  *recent.Memory[string, struct{}]
}

func newToldOnce(c clock.PassiveClock) *toldOnce {
	return &toldOnce{clock: c, told: recent.New[string, struct{}](toldFor, 0)}
}

// first tells whether key was not told within toldFor, and remembers it.
func (t *toldOnce) first(key string) bool {
	now := t.clock.Now()
	if _, ok := t.told.Get(key, now); ok {
		return false
	}
	t.told.Put(key, struct{}{}, now)
	return true
}
