package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzManagedFieldsFilter holds the filter to encoding/json's reading of the
// same bytes, read in pieces of any size: a stream of valid JSON values (an
// answer, or a watch's events) comes out as valid JSON that decodes to the
// input's values without the managedFields of the metadata of an object, of a
// watch event's object or of a list's items, and nothing else changed; input
// with no managedFields key passes byte for byte, valid or not. The seeds run
// in make test; go test -fuzz FuzzManagedFieldsFilter ./internal/clients/kube
// searches further.
func FuzzManagedFieldsFilter(f *testing.F) {
	const mf = `"managedFields":[{"manager":"provider","operation":"Update","fieldsV1":{"f:metadata":{"f:finalizers":{".":{},"v:\"x\"":{}}}}}]`
	for _, seed := range []string{
		`{"kind":"IASApplication","metadata":{"generation":2,` + mf + `,"name":"a"},"spec":{}}`,
		`{"metadata":{` + mf + `,"name":"a","uid":"u"}}`,
		`{"metadata":{"name":"a",` + mf + `}}`,
		`{"metadata":{ "managedFields" : null , "uid":"u"}}`,
		"{\n  \"metadata\": {\n    \"name\": \"a\",\n    \"managedFields\": [\n      {}\n    ],\n    \"uid\": \"u\"\n  }\n}",
		`{"type":"ADDED","object":{"metadata":{"name":"a",` + mf + `}}}` + "\n" + `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}}` + "\n",
		`{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{` + mf + `,"name":"a"}},{"metadata":{"name":"b",` + mf + `}}]}`,
		`{"spec":{"managedFields":[1],"metadata":{"managedFields":[2]}},"items":{"metadata":{"managedFields":3}}}`,
		`{"metadata":{"annotations":{"managedFields":"kept"},"managedFields":-1.5e3,"labels":{"a":"managedFields"}}}`,
		`{"metadata":{"name":"a\"},{[","managedFields":[{"m":"}]\\\"]"}],"uid":"\\"},"spec":{"s":"\"metadata\":{"}}`,
		`{"metadata":{"managedFieldsX":[1],"managedField":[2],"managedFields":true}}`,
		`[{"metadata":{"managedFields":1}},{"items":[{"metadata":{"managedFields":2}}]}]`,
		`{"metadata":{"managedFields":1},"metadata":{"managedFields":2,"a":1}}`,
		`1 "metadata" {"object":{"metadata":{"managedFields":{}}}} null`,
		`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"not found","code":404}`,
		`404 page not found`,
		`{"metadata":{"name":"a","manag`,
		`{"metadata":{"managedFields":[1,2`,
	} {
		f.Add([]byte(seed), uint8(0))
		f.Add([]byte(seed), uint8(1))
		f.Add([]byte(seed), uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		out, err := io.ReadAll(newManagedFieldsFilter(io.NopCloser(&pieces{data: in, size: int(piece)})))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(in, []byte("managedFields")) {
			if !bytes.Equal(out, in) {
				t.Fatalf("input without managedFields changed:\n in: %q\nout: %q", in, out)
			}
			return
		}
		want, ok := decodeAll(in)
		if !ok {
			return // not JSON: passed as far as the filter could tell, no more is promised
		}
		got, ok := decodeAll(out)
		if !ok {
			t.Fatalf("valid JSON came out invalid:\n in: %q\nout: %q", in, out)
		}
		if bytes.Contains(in, []byte(`\u`)) {
			// The API server writes keys unescaped, and the filter compares
			// them as bytes: a key spelled with \u escapes may be kept.
			return
		}
		for _, v := range want {
			withoutManagedFields(v)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("in: %q\nout: %q\n-want +got:\n%s", in, out, diff)
		}
	})
}

// pieces hands out data size bytes at a time (all at once for 0).
type pieces struct {
	data []byte
	size int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := len(p.data)
	if p.size > 0 && p.size < n {
		n = p.size
	}
	n = copy(b, p.data[:n])
	p.data = p.data[n:]
	return n, nil
}

// decodeAll reads a stream of JSON values as encoding/json does; false if it
// is not one.
func decodeAll(b []byte) ([]any, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var vs []any
	for {
		var v any
		err := d.Decode(&v)
		if errors.Is(err, io.EOF) {
			return vs, true
		}
		if err != nil {
			return nil, false
		}
		vs = append(vs, v)
	}
}

// withoutManagedFields removes what the filter leaves out from a top-level
// value: the managedFields of its metadata, of a watch event's object's and
// of its items' (a list).
func withoutManagedFields(v any) {
	root, ok := v.(map[string]any)
	if !ok {
		return
	}
	dropFromMetadata(root)
	if obj, ok := root["object"].(map[string]any); ok {
		dropFromMetadata(obj)
	}
	if items, ok := root["items"].([]any); ok {
		for _, it := range items {
			if obj, ok := it.(map[string]any); ok {
				dropFromMetadata(obj)
			}
		}
	}
}

func dropFromMetadata(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, managedFieldsKey)
	}
}
