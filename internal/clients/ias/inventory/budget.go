package inventory

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/ias"
)

// Defaults of a Budget: what the inventories of namespaces' ProviderConfigs
// may hold and list at once, together, however many configs exist. The
// platform's own (ClusterProviderConfig) inventories are outside it: bounded
// by a listing's own bounds alone, and never wait for a namespace's. One
// listing at a time: a listing decodes its pages on a core of its own, and
// two at once could take both cores of a small pod right after a start, while
// the platform's new runtimes wait for CPU.
const (
	DefaultNamespaceBytes    = 16 << 20
	DefaultNamespaceListings = 1
)

// A Budget bounds the inventories of namespaced configs across the process:
// the bytes their apps take while kept or being listed, a refresh's new copy
// beside the old included, and the listings that run at once. A listing
// that would pass the bytes is stopped and kept by nobody: its resources
// read their apps one by one, at their own config's rate.
type Budget struct {
	maxBytes int64
	held     atomic.Int64
	listings chan struct{}
}

// NewBudget returns a Budget of maxBytes and listings at once; zero or less
// for the defaults.
func NewBudget(maxBytes int64, listings int) *Budget {
	if maxBytes <= 0 {
		maxBytes = DefaultNamespaceBytes
	}
	if listings <= 0 {
		listings = DefaultNamespaceListings
	}
	return &Budget{maxBytes: maxBytes, listings: make(chan struct{}, listings)}
}

// ErrOverBudget is a namespace's listing stopped at the process's budget.
var ErrOverBudget = errors.New("the inventories of namespaces' ProviderConfigs hold all the memory the provider gives them")

// Held is the bytes the inventories of namespaced configs hold.
func (b *Budget) Held() int64 { return b.held.Load() }

// begin takes one of the listings at once if one is free: no caller waits
// for a namespace's turn (it would hold a worker that others need).
func (b *Budget) begin() (release func(), ok bool) {
	select {
	case b.listings <- struct{}{}:
		return func() { <-b.listings }, true
	default:
		return nil, false
	}
}

// take adds n bytes, or refuses when they would pass the budget.
func (b *Budget) take(n int64) error {
	for {
		cur := b.held.Load()
		if cur+n > b.maxBytes {
			return fmt.Errorf("%w (%d MiB)", ErrOverBudget, b.maxBytes>>20)
		}
		if b.held.CompareAndSwap(cur, cur+n) {
			return nil
		}
	}
}

// give returns n bytes.
func (b *Budget) give(n int64) { b.held.Add(-n) }

// appBytes is what an app takes in an inventory: its strings, the struct and
// the map's entry.
func appBytes(a ias.Application) int64 {
	return int64(len(a.ID)*2+len(a.Name)+len(a.DisplayName)+len(a.Description)+len(a.GlobalAccount)+
		len(a.SSOType)+len(a.ClientID)+len(a.Type)) + 256
}
