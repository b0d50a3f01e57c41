package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

func TestReconcilerLogger(t *testing.T) {
	cases := map[string]struct {
		reason    string
		verbosity int
		log       func(l logging.Logger)
		want      []string
	}{
		"InfoCarriesEveryValueAdded": {
			reason: "a reconcile's log line carries every value its logger was given",
			log: func(l logging.Logger) {
				l.WithValues("request", "ns/a").WithValues("uid", "u1").Info("hello", "k", "v")
			},
			want: []string{`"level"=0 "msg"="hello" "request"="ns/a" "uid"="u1" "k"="v"`},
		},
		"DebugIsDroppedAtTheDefaultLevel": {
			reason: "debug lines cost nothing by default",
			log:    func(l logging.Logger) { l.WithValues("request", "ns/a").Debug("quiet") },
			want:   nil,
		},
		"DebugIsWrittenWhenEnabled": {
			reason:    "--debug writes them",
			verbosity: 1,
			log:       func(l logging.Logger) { l.WithValues("request", "ns/a").Debug("loud") },
			want:      []string{`"level"=1 "msg"="loud" "request"="ns/a"`},
		},
		"SiblingsDoNotShareValues": {
			reason: "loggers made from one parent never write into each other's values",
			log: func(l logging.Logger) {
				// Grown in steps, the values have room to spare after the last.
				parent := l.WithValues("a", 1).WithValues("b", 2).WithValues("c", 3)
				one, two := parent.WithValues("x", "one"), parent.WithValues("x", "two")
				one.Info("first")
				two.Info("second")
			},
			want: []string{
				`"level"=0 "msg"="first" "a"=1 "b"=2 "c"=3 "x"="one"`,
				`"level"=0 "msg"="second" "a"=1 "b"=2 "c"=3 "x"="two"`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			sink := funcr.New(func(prefix, args string) { got = append(got, args) }, funcr.Options{Verbosity: tc.verbosity})
			tc.log(newReconcilerLogger(sink))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s\nlogged:\n%s\nwant:\n%s", tc.reason, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestLazyValues: the manager's logger, as controller-runtime uses it, writes
// lines with every value and name added, and none below its level.
func TestLazyValues(t *testing.T) {
	cases := map[string]struct {
		reason string
		log    func(l logr.Logger)
		want   []string
	}{
		"InfoCarriesValuesAndName": {
			reason: "controller-runtime's values and name reach the line",
			log: func(l logr.Logger) {
				l.WithValues("controller", "c").WithName("n").WithValues("reconcileID", "r").Info("hello", "k", "v")
			},
			want: []string{`n "level"=0 "msg"="hello" "controller"="c" "reconcileID"="r" "k"="v"`},
		},
		"ErrorCarriesValues": {
			reason: "so they do on an error line",
			log:    func(l logr.Logger) { l.WithValues("controller", "c").Error(errors.New("boom"), "failed") },
			want:   []string{` "msg"="failed" "error"="boom" "controller"="c"`},
		},
		"BelowTheLevelNothing": {
			reason: "a line below the level is not written",
			log:    func(l logr.Logger) { l.WithValues("controller", "c").V(1).Info("quiet") },
			want:   nil,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			sink := funcr.New(func(prefix, args string) { got = append(got, prefix+" "+args) }, funcr.Options{})
			tc.log(lazyValues(sink))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("%s\nlogged:\n%s\nwant:\n%s", tc.reason, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// countingSink counts the values handed to it.
type countingSink struct {
	logr.LogSink
	withValues *int
}

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return countingSink{s.LogSink.WithValues(kv...), s.withValues}
}

// TestLazyValuesEncodeOnlyForALine: values added for lines never written never
// reach the sink (zap would encode them there).
func TestLazyValuesEncodeOnlyForALine(t *testing.T) {
	n := 0
	l := lazyValues(logr.New(countingSink{funcr.New(func(string, string) {}, funcr.Options{}).GetSink(), &n}))
	r := l.WithValues("controller", "c").WithValues("reconcileID", "r")
	r.V(1).Info("quiet")
	if n != 0 {
		t.Fatalf("values reached the sink %d times before a line was written", n)
	}
	r.Info("written")
	if n != 1 {
		t.Fatalf("want the values handed over once for the line written, got %d", n)
	}
}
