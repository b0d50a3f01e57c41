package iassim

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/google/uuid"
)

// Hostile answers: a tenant that is wrong on purpose, to hold the provider's
// bounds to. A real tenant never answers so (no recording shows any of it).

// Endless kinds of listing that never end.
const (
	// EndlessFresh answers an empty page with a nextCursor never sent before.
	EndlessFresh = "fresh"
	// EndlessRepeat answers an empty page with the same nextCursor each time.
	EndlessRepeat = "repeat"
	// EndlessHugeCursor answers an empty page with a fresh nextCursor of 3 MiB.
	EndlessHugeCursor = "huge-cursor"
	// EndlessSameApps answers, page after page, the same 100 apps with a
	// fresh nextCursor: a tenant padded with repeated ids.
	EndlessSameApps = "same-apps"
)

// cursorPadding pads EndlessHugeCursor's cursors to 3 MiB.
var cursorPadding = bytes.Repeat([]byte("c"), 3<<20)

// WellKnownTarget names the well-known document to SetOversized.
const WellKnownTarget = "well-known"

// SetEndlessPages makes listings with this filter ("" is the listing of all
// apps) answer an empty page whose nextCursor leads on forever, of kind
// EndlessFresh or EndlessRepeat; kind "" ends it.
func (s *Server) SetEndlessPages(filter, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endless == nil {
		s.endless = map[string]string{}
	}
	if kind == "" {
		delete(s.endless, filter)
		return
	}
	s.endless[filter] = kind
}

// SetOversized makes the GET of the app with this ID (or WellKnownTarget, the
// well-known document) answer a JSON body of about n bytes, sent in chunks
// without a Content-Length; n 0 ends it.
func (s *Server) SetOversized(target string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.oversized == nil {
		s.oversized = map[string]int64{}
	}
	if n <= 0 {
		delete(s.oversized, target)
		return
	}
	s.oversized[target] = n
}

// endlessPage answers a listing that SetEndlessPages names, and tells whether it did.
func (s *Server) endlessPage(w http.ResponseWriter, filter string) bool {
	s.mu.Lock()
	kind := s.endless[filter]
	s.mu.Unlock()
	if kind == "" {
		return false
	}
	cursor, apps := "endless", []any{}
	switch kind {
	case EndlessFresh:
		cursor = uuid.NewString()
	case EndlessHugeCursor:
		// Written from one shared padding, so that the simulator, which runs
		// in the test's process, adds nothing to the memory the test weighs.
		w.Header().Set("Content-Type", "application/json;charset=UTF-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"totalResults":1,"itemsPerPage":0,"applications":[],"nextCursor":"`+uuid.NewString())
		_, _ = w.Write(cursorPadding)
		_, _ = io.WriteString(w, `"}`)
		return true
	case EndlessSameApps:
		cursor = uuid.NewString()
		for i := range 100 {
			a := &App{ID: fmt.Sprintf("00000000-0000-0000-0000-%012d", i), Name: fmt.Sprintf("padding-%d", i), Type: "charged"}
			apps = append(apps, a.json(""))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"totalResults": 1, "itemsPerPage": len(apps), "applications": apps, "nextCursor": cursor})
	return true
}

// oversizedBody answers with the body SetOversized set for target, and tells
// whether it did.
func (s *Server) oversizedBody(w http.ResponseWriter, r *http.Request, target string) bool {
	s.mu.Lock()
	n := s.oversized[target]
	s.mu.Unlock()
	if n <= 0 {
		return false
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"id":"`+target+`","name":"`)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for sent := int64(0); sent < n && r.Context().Err() == nil; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			return true
		}
	}
	_, _ = io.WriteString(w, `"}`)
	return true
}
