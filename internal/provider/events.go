package provider

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// eventBurst is how many events of one reason an object may record at once,
// before one per 5 minutes (client-go's spam filter; its default is 25 per
// object and type).
const eventBurst = 2

// newEventBroadcaster is client-go's event broadcaster with a stricter spam
// filter. A resource whose runtime stays away is refused at every try, and
// crossplane-runtime records a Warning for each: at client-go's default, a
// thousand runtimes gone at once write more events than everything else
// writes together. Here the same reason on the same object goes through twice
// at once, then once per 5 minutes; the condition always says the latest.
func newEventBroadcaster() record.EventBroadcaster {
	return record.NewBroadcasterWithCorrelatorOptions(record.CorrelatorOptions{BurstSize: eventBurst, QPS: 1.0 / 300, SpamKeyFunc: spamKey})
}

// spamKey is client-go's spam filter key with the reason added: each reason
// of an object has its own allowance, so a repeated Warning does not use up
// the Normal events of a creation or a deletion.
func spamKey(e *corev1.Event) string {
	o := e.InvolvedObject
	return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, e.Type, e.Reason}, "/")
}
