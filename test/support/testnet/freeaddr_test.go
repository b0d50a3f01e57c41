package testnet

import "testing"

// TestFreeAddrNeverTwice: however often the kernel hands the same port out,
// FreeAddr gives each address once.
func TestFreeAddrNeverTwice(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		addr, err := FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if seen[addr] {
			t.Fatalf("%s handed out twice", addr)
		}
		seen[addr] = true
	}
}
