// Package testlog gives tests, benchmarks and tools that run controller-runtime
// code outside the provider a configured logger: without one,
// controller-runtime prints a warning with a stack trace instead of its logs.
package testlog

import (
	"io"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// Setup sends controller-runtime's logs, warnings and above, to w.
func Setup(w io.Writer) {
	ctrl.SetLogger(zap.New(zap.WriteTo(w), zap.Level(zapcore.WarnLevel)))
}
