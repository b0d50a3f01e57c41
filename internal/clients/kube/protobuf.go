package kube

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
)

// PreferProtobuf makes cfg's clients send core objects in protobuf and ask
// for it, still reading an answer in JSON. Every API server serves core
// objects (Secrets, Events) in protobuf, whose encoding and decoding cost a
// fraction of JSON's. Only for clients of core objects: custom resources have
// no protobuf.
func PreferProtobuf(cfg *rest.Config) {
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
}
