// Package testnet has the network neighbours tests and benchmarks put beside
// the provider: a server that accepts connections and never answers, a port
// that refuses them, a proxy to a real server that can turn into either
// (a runtime whose network goes away while the provider runs), and an API
// server that throttles for good.
package testnet

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Hanging accepts TCP connections and never answers on them, as an API server
// behind a broken network path does.
type Hanging struct {
	// Addr is host:port.
	Addr     string
	accepted atomic.Int64
	open     atomic.Int64
	// longest is the longest a caller has held a connection, in nanoseconds.
	longest atomic.Int64
}

// Hang listens on a loopback port until the test ends.
func Hang(tb testing.TB) *Hanging {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	h := &Hanging{Addr: l.Addr().String()}
	held := &conns{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.accepted.Add(1)
			h.open.Add(1)
			held.add(c)
			// Read until the caller closes it: the connection is open till then.
			go func(since time.Time) {
				_, _ = io.Copy(io.Discard, c)
				h.open.Add(-1)
				held := int64(time.Since(since))
				for cur := h.longest.Load(); held > cur && !h.longest.CompareAndSwap(cur, held); cur = h.longest.Load() {
				}
			}(time.Now())
		}
	}()
	tb.Cleanup(func() {
		_ = l.Close()
		held.closeAll()
	})
	return h
}

// Accepted is how many connections it accepted so far.
func (h *Hanging) Accepted() int64 { return h.accepted.Load() }

// Open is how many of them the callers have not closed.
func (h *Hanging) Open() int64 { return h.open.Load() }

// Longest is the longest a caller held a connection before closing it.
func (h *Hanging) Longest() time.Duration { return time.Duration(h.longest.Load()) }

// RefusingAddr is a loopback host:port where nothing listens.
func RefusingAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// Proxy forwards TCP connections to a server until it is told to hang or to
// refuse.
type Proxy struct {
	// Addr is host:port.
	Addr string
	to   string
	l    net.Listener

	hanging atomic.Bool
	open    conns
}

// NewProxy forwards a loopback port to server (host:port or a URL) until the
// test ends.
func NewProxy(tb testing.TB, server string) *Proxy {
	tb.Helper()
	return ProxyAt(tb, "127.0.0.1:0", server)
}

// ProxyAt forwards addr to server, as NewProxy does; addr may be a port that
// refused connections a moment ago (a runtime that comes back), so binding it
// is retried for a few seconds.
func ProxyAt(tb testing.TB, addr, server string) *Proxy {
	tb.Helper()
	to := server
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		to = u.Host
	}
	var (
		l   net.Listener
		err error
	)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if l, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), to: to, l: l}
	go p.serve()
	tb.Cleanup(func() {
		_ = l.Close()
		p.open.closeAll()
	})
	return p
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.open.add(c)
		if p.hanging.Load() {
			continue
		}
		go p.forward(c)
	}
}

func (p *Proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		p.open.close(c)
		return
	}
	p.open.add(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	p.open.close(c, up)
}

// Hang makes the proxy accept connections and never answer; the connections
// it forwarded so far are cut.
func (p *Proxy) Hang() {
	p.hanging.Store(true)
	p.open.closeAll()
}

// Refuse closes the proxy's port, and every connection through it.
func (p *Proxy) Refuse() {
	_ = p.l.Close()
	p.open.closeAll()
}

// conns are the open connections, to close at the end; a proxy's forwarded
// ones leave when they end, so that a long benchmark does not keep them all.
type conns struct {
	mu sync.Mutex
	cs map[net.Conn]struct{}
}

func (c *conns) add(conn net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cs == nil {
		c.cs = map[net.Conn]struct{}{}
	}
	c.cs[conn] = struct{}{}
}

// close closes these connections and forgets them.
func (c *conns) close(cs ...net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range cs {
		_ = conn.Close()
		delete(c.cs, conn)
	}
}

func (c *conns) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.cs {
		_ = conn.Close()
	}
	c.cs = nil
}
