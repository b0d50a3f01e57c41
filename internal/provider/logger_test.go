package provider

import (
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/go-logr/logr/funcr"
)

func TestReconcilerLogger(t *testing.T) {
	cases := map[string]struct {
		verbosity int
		log       func(l logging.Logger)
		want      []string
	}{
		"InfoCarriesEveryValueAdded": {
			log: func(l logging.Logger) {
				l.WithValues("request", "ns/a").WithValues("uid", "u1").Info("hello", "k", "v")
			},
			want: []string{`"level"=0 "msg"="hello" "request"="ns/a" "uid"="u1" "k"="v"`},
		},
		"DebugIsDroppedAtTheDefaultLevel": {
			log:  func(l logging.Logger) { l.WithValues("request", "ns/a").Debug("quiet") },
			want: nil,
		},
		"DebugIsWrittenWhenEnabled": {
			verbosity: 1,
			log:       func(l logging.Logger) { l.WithValues("request", "ns/a").Debug("loud") },
			want:      []string{`"level"=1 "msg"="loud" "request"="ns/a"`},
		},
		"SiblingsDoNotShareValues": {
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
				t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
