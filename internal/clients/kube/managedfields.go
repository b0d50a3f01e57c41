package kube

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
)

// StripManagedFields wraps the management API server's transport so that the
// provider never decodes managedFields. They are about half of every
// IASApplication and RuntimeSecret the API server sends, in each watch event
// and in the answer to each write, and no part of the provider reads them: the
// informer cache drops them after decoding (CacheOptions), and writes send
// none, so the API server keeps its own. client-go decodes a JSON watch event
// in seven passes over its bytes (framing, two kind lookups, two validations,
// two unmarshals) and each pass costs in proportion to the bytes, so the
// managedFields of custom resources, which have no protobuf, would be a
// visible share of the provider's CPU. Answers in other encodings (protobuf for
// built-in kinds) pass unchanged.
func StripManagedFields(next http.RoundTripper) http.RoundTripper {
	return managedFieldsStripping{next: next}
}

type managedFieldsStripping struct{ next http.RoundTripper }

func (t managedFieldsStripping) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || resp.Body == http.NoBody || !isJSON(resp.Header.Get("Content-Type")) {
		return resp, err
	}
	resp.Body = newManagedFieldsFilter(resp.Body)
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// isJSON tells whether an answer's media type is JSON, whatever its
// parameters (a metadata-only answer is application/json;as=...). It runs
// for every answer, so it parses nothing more than the type.
func isJSON(contentType string) bool {
	t, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/json")
}

// role is what a JSON object or array is in the API server's answer: only
// the metadata of an object, of a watch event's object or of a list's item
// loses its managedFields.
type role uint8

const (
	roleOther    role = iota
	roleRoot          // a top-level value: an object, a list or a watch event
	roleEvent         // a watch event's object
	roleItems         // a list's items
	roleItem          // one item of a list
	roleMetadata      // an object's metadata
)

// roleKey is a key that tells a role.
type roleKey uint8

const (
	keyOther roleKey = iota
	keyMetadata
	keyObject
	keyItems
)

func roleKeyOf(k []byte) roleKey {
	switch string(k) {
	case "metadata":
		return keyMetadata
	case "object":
		return keyObject
	case "items":
		return keyItems
	}
	return keyOther
}

// childRole is the role of a container that is the value of key in a
// container of role parent (keyOther for an array's element).
func childRole(parent role, key roleKey, object bool) role {
	switch {
	case key == keyMetadata && object && (parent == roleRoot || parent == roleEvent || parent == roleItem):
		return roleMetadata
	case parent == roleRoot && key == keyObject && object:
		return roleEvent
	case parent == roleRoot && key == keyItems && !object:
		return roleItems
	case parent == roleItems && object:
		return roleItem
	}
	return roleOther
}

type frame struct {
	role   role
	object bool
	// expectKey: the next string of this object is a key.
	expectKey bool
	// key is the last key read in this object, where keys tell roles.
	key roleKey
	// dropComma: the member left out was this object's first, so the comma
	// after it goes too.
	dropComma bool
}

// maxHeld bounds what is held back while a metadata key is read; a longer key
// is not managedFields and passes.
const maxHeld = 64

// maxRoleKey is the longest key that tells a role ("metadata").
const maxRoleKey = 8

const managedFieldsKey = "managedFields"

// managedFieldsFilter is a reader over a stream of JSON values (one answer, or
// a watch's events one after another) that leaves out the managedFields member
// of objects' metadata and passes every other byte as it came. It decides as
// the bytes arrive: a comma and a key in a metadata object are held back only
// until the key is known, so a watch event passes as soon as it is complete.
// Input that is not valid JSON passes as it is, as far as it goes.
type managedFieldsFilter struct {
	src     io.ReadCloser
	buffers *filterBuffers
	in      []byte
	out     []byte
	next    int // the first byte of out not yet read
	err     error

	stack             []frame
	inString, escaped bool
	// roleKey is the key being read in an object whose keys tell roles.
	roleKey     []byte
	readingRole bool

	// hold is what is held back in a metadata object: a comma, whitespace,
	// and the key being read (holdingKey).
	hold       []byte
	holdingKey bool

	// skipping: inside the member being left out. skipValue: its value has
	// begun; skipDepth: containers open inside it; skipLiteral: inside a
	// number, true, false or null; skipFirst: it was its object's first.
	skipping, skipValue, skipLiteral, skipFirst bool
	skipDepth                                   int
}

// filterBuffers are a filter's buffers, kept for the next answer: most
// answers are a few KB and read at once.
type filterBuffers struct {
	in, out, hold, roleKey []byte
	stack                  []frame
}

const filterBuffer = 4096

var filterBufferPool = sync.Pool{New: func() any {
	return &filterBuffers{in: make([]byte, filterBuffer), out: make([]byte, 0, filterBuffer+maxHeld),
		hold: make([]byte, 0, maxHeld+1), roleKey: make([]byte, 0, maxRoleKey+1), stack: make([]frame, 0, 8)}
}}

func newManagedFieldsFilter(src io.ReadCloser) *managedFieldsFilter {
	b := filterBufferPool.Get().(*filterBuffers)
	return &managedFieldsFilter{src: src, buffers: b, in: b.in, out: b.out[:0], hold: b.hold[:0], roleKey: b.roleKey[:0], stack: b.stack[:0]}
}

func (f *managedFieldsFilter) Close() error { return f.src.Close() }

// recycle keeps the buffers for the next answer, once this one has ended and
// everything was read; only Read, on the reader's goroutine, calls it, so a
// Close from another goroutine never races a Read still using them.
func (f *managedFieldsFilter) recycle() {
	if b := f.buffers; b != nil {
		b.out, b.hold, b.roleKey, b.stack = f.out[:0], f.hold[:0], f.roleKey[:0], f.stack[:0]
		f.buffers, f.in, f.out, f.next, f.hold, f.roleKey, f.stack = nil, nil, nil, 0, nil, nil, nil
		filterBufferPool.Put(b)
	}
}

func (f *managedFieldsFilter) Read(p []byte) (int, error) {
	for f.next == len(f.out) {
		if f.err != nil {
			f.recycle()
			return 0, f.err
		}
		f.out, f.next = f.out[:0], 0
		n, err := f.src.Read(f.in)
		f.filter(f.in[:n])
		if err != nil {
			// Whatever is still held belongs to input that ended early.
			f.release()
			f.err = err
		}
	}
	n := copy(p, f.out[f.next:])
	f.next += n
	return n, nil
}

// filter reads data. Runs of string content, most of the bytes, are passed or
// skipped whole; the rest is read a byte at a time.
func (f *managedFieldsFilter) filter(data []byte) {
	for i := 0; i < len(data); i++ {
		if f.inString && !f.escaped && (f.plainRun() || f.skipping) {
			j := i
			for j < len(data) && data[j] != '"' && data[j] != '\\' {
				j++
			}
			if !f.skipping {
				f.out = append(f.out, data[i:j]...)
			}
			if i = j; i == len(data) {
				return
			}
		}
		c := data[i]
		if !f.skipping || !f.skip(c) {
			f.byte(c)
		}
	}
}

// plainRun tells whether string content passes as it is: nothing held, no
// key that tells a role being read, and not in the member left out.
func (f *managedFieldsFilter) plainRun() bool {
	return !f.skipping && len(f.hold) == 0 && !f.readingRole
}

// emit passes c on, or holds it back while a comma or key is held.
func (f *managedFieldsFilter) emit(c byte) {
	if len(f.hold) > 0 {
		f.hold = append(f.hold, c)
		return
	}
	f.out = append(f.out, c)
}

func (f *managedFieldsFilter) release() {
	f.out = append(f.out, f.hold...)
	f.hold, f.holdingKey = f.hold[:0], false
}

func (f *managedFieldsFilter) top() *frame {
	if len(f.stack) == 0 {
		return nil
	}
	return &f.stack[len(f.stack)-1]
}

// byte reads c outside the member being left out.
func (f *managedFieldsFilter) byte(c byte) {
	if f.inString {
		f.stringByte(c)
		return
	}
	fr := f.top()
	switch c {
	case '"':
		f.inString = true
		if fr != nil && fr.object && fr.expectKey {
			fr.expectKey = false
			if fr.role == roleMetadata {
				f.holdingKey = true
				f.hold = append(f.hold, c)
				return
			}
			f.readingRole = fr.role != roleOther
			f.roleKey = f.roleKey[:0]
		}
	case '{', '[':
		r := roleRoot
		if fr != nil {
			key := keyOther
			if fr.object {
				key = fr.key
			}
			r = childRole(fr.role, key, c == '{')
		}
		f.stack = append(f.stack, frame{role: r, object: c == '{', expectKey: c == '{'})
	case '}', ']':
		f.release()
		if fr != nil {
			f.stack = f.stack[:len(f.stack)-1]
		}
	case ',':
		if fr != nil && fr.object {
			fr.expectKey = true
			if fr.role == roleMetadata {
				if fr.dropComma {
					fr.dropComma = false
					return
				}
				f.hold = append(f.hold, c)
				return
			}
		}
	}
	f.emit(c)
}

// closesString reads c inside a string and tells whether it ended it.
func (f *managedFieldsFilter) closesString(c byte) bool {
	switch {
	case f.escaped:
		f.escaped = false
	case c == '\\':
		f.escaped = true
	case c == '"':
		f.inString = false
		return true
	}
	return false
}

func (f *managedFieldsFilter) stringByte(c byte) {
	closed := f.closesString(c)
	f.emit(c)
	switch {
	case f.readingRole && closed:
		f.readingRole = false
		f.top().key = roleKeyOf(f.roleKey)
	case f.readingRole:
		if len(f.roleKey) <= maxRoleKey {
			f.roleKey = append(f.roleKey, c)
		}
	case f.holdingKey && closed:
		f.heldKeyRead()
	case f.holdingKey && len(f.hold) > maxHeld:
		f.release()
	}
}

// heldKeyRead decides on the key just read in a metadata object: hold is an
// optional comma, whitespace, and the quoted key.
func (f *managedFieldsFilter) heldKeyRead() {
	q := bytes.IndexByte(f.hold, '"')
	if string(f.hold[q+1:len(f.hold)-1]) != managedFieldsKey {
		f.release()
		return
	}
	f.skipFirst = f.hold[0] != ','
	f.hold, f.holdingKey = f.hold[:0], false
	f.skipping, f.skipValue, f.skipLiteral, f.skipDepth = true, false, false, 0
}

// skip reads c inside the member being left out (after its key): the colon,
// whitespace and the value. It returns false for the byte that ended a
// literal value, which belongs to what follows.
func (f *managedFieldsFilter) skip(c byte) bool {
	switch {
	case f.inString:
		if f.closesString(c) && f.skipDepth == 0 {
			f.skipped()
		}
		return true
	case f.skipLiteral:
		if isLiteralByte(c) {
			return true
		}
		f.skipLiteral = false
		if f.skipDepth == 0 {
			f.skipped()
			return false
		}
	case !f.skipValue:
		if c == ':' || isSpace(c) {
			return true
		}
		f.skipValue = true
	}
	switch {
	case c == '"':
		f.inString = true
	case c == '{' || c == '[':
		f.skipDepth++
	case c == '}' || c == ']':
		f.skipDepth--
		if f.skipDepth == 0 {
			f.skipped()
		}
	case isLiteralByte(c):
		f.skipLiteral = true
	}
	return true
}

func (f *managedFieldsFilter) skipped() {
	f.skipping = false
	if fr := f.top(); fr != nil && f.skipFirst {
		fr.dropComma = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isLiteralByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.'
}
