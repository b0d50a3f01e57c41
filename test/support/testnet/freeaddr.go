package testnet

import (
	"errors"
	"net"
	"sync"
)

// handedOut are the addresses FreeAddr gave before. The kernel may give a
// port that was just closed again to the next bind on port 0, and two
// processes of one test would then fight for it.
var handedOut sync.Map

// FreeAddr is a loopback address nothing listens on, and that this process
// has not handed out before.
func FreeAddr() (string, error) {
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		addr := l.Addr().String()
		_ = l.Close() //nolint:errcheck // Only its port is used.
		if _, given := handedOut.LoadOrStore(addr, struct{}{}); !given {
			return addr, nil
		}
	}
	return "", errors.New("no loopback port is free that was not handed out before")
}
