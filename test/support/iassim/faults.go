package iassim

import (
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// FaultKind is a way a request can fail.
type FaultKind string

// The faults the simulator injects.
const (
	// Fault500 answers 500 with an IAS error body.
	Fault500 FaultKind = "500"
	// Fault429 answers 429 with Retry-After (Fault.RetryAfter, default 1s).
	Fault429 FaultKind = "429"
	// FaultTimeout holds the request without answering until the client gives up
	// (or Options.HoldFor passes, then 504).
	FaultTimeout FaultKind = "timeout"
	// FaultReset closes the connection without an answer.
	FaultReset FaultKind = "reset"
)

// A Fault makes matching requests fail.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// Operation limits the fault to one operation (a name from package internal/clients/ias/operation); empty
	// means every API operation.
	Operation string `json:"operation,omitempty"`
	// Count fails the next Count matching requests. Zero uses Rate instead.
	Count int `json:"count,omitempty"`
	// Rate fails this fraction (0..1) of matching requests while the fault is set.
	Rate float64 `json:"rate,omitempty"`
	// RetryAfter for 429 answers; default 1s.
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
}

// pick returns the fault to apply to a request of operation op, consuming a count.
// Callers hold the server lock.
func pickFault(faults []*Fault, op string) (*Fault, []*Fault) {
	for i, f := range faults {
		if f.Operation != "" && f.Operation != op {
			continue
		}
		if f.Count > 0 {
			f.Count--
			if f.Count == 0 {
				faults = append(faults[:i:i], faults[i+1:]...)
			}
			return f, faults
		}
		if f.Rate > 0 && rand.Float64() < f.Rate {
			return f, faults
		}
	}
	return nil, faults
}

// applyFault answers a request as the fault says.
func (s *Server) applyFault(w *statusRecorder, r *http.Request, f *Fault) {
	switch f.Kind {
	case Fault429:
		after := f.RetryAfter
		if after <= 0 {
			after = time.Second
		}
		w.Header().Set("Retry-After", itoa(int((after+time.Second-1)/time.Second)))
		writeError(w, http.StatusTooManyRequests, "Too many requests")
	case FaultTimeout:
		select {
		case <-r.Context().Done():
			w.status = 499
		case <-time.After(s.opts.HoldFor):
			writeError(w, http.StatusGatewayTimeout, "Gateway timeout")
		}
	case FaultReset:
		conn, _, err := w.Hijack()
		if err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.SetLinger(0)
			}
			_ = conn.Close()
		}
		w.status = 599
	default:
		writeError(w, http.StatusInternalServerError, "Internal server error")
	}
}
