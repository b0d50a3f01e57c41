package iasapplication

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/utils/clock"
)

// toldFor is how long a told message is remembered. Its keys name the day or
// the moment of what was told (a rejection's time, a certificate warning's
// date), so a day is all they need; expired ones are pruned as new ones come.
const toldFor = 25 * time.Hour

// toldOnce remembers which messages were told, so that one shared by many
// resources (a ProviderConfig's rejected credentials, its expiring
// certificate) becomes one event, not one per resource.
type toldOnce struct {
	mu   sync.Mutex
	told *cache.Expiring
}

func newToldOnce(c clock.Clock) *toldOnce {
	return &toldOnce{told: cache.NewExpiringWithClock(c)}
}

// first tells whether key was not told within toldFor, and remembers it.
func (t *toldOnce) first(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.told.Get(key); ok {
		return false
	}
	t.told.Set(key, struct{}{}, toldFor)
	return true
}
