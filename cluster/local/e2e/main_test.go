//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/kyma-project/provider-eventing-auth/test/support/testlog"
)

func TestMain(m *testing.M) {
	testlog.Setup(os.Stderr)
	os.Exit(m.Run())
}
