package loopback

import "testing"

func TestHost(t *testing.T) {
	cases := map[string]bool{"localhost": true, "127.0.0.1": true, "127.8.0.1": true, "::1": true,
		"10.0.0.1": false, "tenant.accounts.ondemand.com": false, "localhost.evil.example": false, "": false}
	for host, want := range cases {
		if got := Host(host); got != want {
			t.Errorf("Host(%q) = %v, want %v", host, got, want)
		}
	}
}
