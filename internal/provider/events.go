package provider

import (
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/kyma-project/provider-eventing-auth/internal/clients/kube"
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
func newEventBroadcaster() *ownSink {
	return &ownSink{EventBroadcaster: record.NewBroadcasterWithCorrelatorOptions(
		record.CorrelatorOptions{BurstSize: eventBurst, QPS: 1.0 / 300, SpamKeyFunc: spamKey})}
}

// ownSink is a broadcaster that records to the sink it was given (recordTo),
// whatever sink it is started with: controller-runtime starts it with a client
// of its own that speaks JSON. It is given its sink before the manager starts.
type ownSink struct {
	record.EventBroadcaster
	sink record.EventSink
}

func (b *ownSink) recordTo(sink record.EventSink) { b.sink = sink }

func (b *ownSink) StartRecordingToSink(sink record.EventSink) watch.Interface {
	if b.sink != nil {
		sink = b.sink
	}
	return b.EventBroadcaster.StartRecordingToSink(sink)
}

// newEventSink writes events to the API server at cfg in protobuf, through
// hc. In JSON, encoding each, decoding the answer and passing it through the
// managedFields filter is a large part of the CPU of a deletion's reconciles,
// which write events.
func newEventSink(cfg *rest.Config, hc *http.Client) (record.EventSink, error) {
	pc := rest.CopyConfig(cfg)
	kube.PreferProtobuf(pc)
	c, err := corev1client.NewForConfigAndClient(pc, hc)
	if err != nil {
		return nil, err
	}
	return &corev1client.EventSinkImpl{Interface: c.Events("")}, nil
}

// spamKey is client-go's spam filter key with the reason added: each reason
// of an object has its own allowance, so a repeated Warning does not use up
// the Normal events of a creation or a deletion.
func spamKey(e *corev1.Event) string {
	o := e.InvolvedObject
	return strings.Join([]string{e.Source.Component, e.Source.Host, o.Kind, o.Namespace, o.Name, string(o.UID), o.APIVersion, e.Type, e.Reason}, "/")
}
