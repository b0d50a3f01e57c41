// Package loopback tells loopback hosts, the only ones plain http may reach.
package loopback

import "net"

// Host tells whether host (a name or an IP, without port) is this machine.
func Host(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
