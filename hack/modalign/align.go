package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

// A Module is one a cold `make local-run` builds: its directory, relative to
// the repository's root, and the packages built from it. The code generators
// (hack/tools) and promtool are left out: they are not built on the way to a
// running stack, and their dependencies may need to differ.
type Module struct {
	Dir      string
	Packages string
}

// Modules: the envtest binaries, the Crossplane CLI and crane, Crossplane
// core (each module's tools), the provider, the function and the local stack.
var Modules = []Module{
	{"hack/envtest", "tool"},
	{"hack/crossplane", "tool"},
	{"hack/crossplane-core", "tool"},
	{".", "./..."},
	{"function", "./..."},
	{"cluster/local", "./..."},
}

// A Lag is a module that builds a dependency at a lower version than another
// module of Modules does.
type Lag struct {
	Module  string
	Path    string
	Version string
	Highest string
	// replaced: the module reaches its version through a replace directive
	// (hack/envtest does for the Kubernetes staging modules, which
	// k8s.io/kubernetes requires at v0.0.0), so raising it means raising the
	// replacement.
	replaced bool
}

func (l Lag) String() string {
	return fmt.Sprintf("%s builds %s %s; another module builds %s", l.Module, l.Path, l.Version, l.Highest)
}

// dependency is a module whose packages are built, at the version built.
type dependency struct {
	version  string
	replaced bool
}

// Check returns every dependency a module builds at a lower version than
// another module does.
func Check(root string) ([]Lag, error) {
	lists := map[string]map[string]dependency{}
	for _, m := range Modules {
		l, err := built(filepath.Join(root, m.Dir), m.Packages)
		if err != nil {
			return nil, err
		}
		lists[m.Dir] = l
	}
	highest := map[string]string{}
	for _, l := range lists {
		for path, d := range l {
			if h, ok := highest[path]; !ok || semver.Compare(d.version, h) > 0 {
				highest[path] = d.version
			}
		}
	}
	var lags []Lag
	for _, m := range Modules {
		for _, path := range slices.Sorted(maps.Keys(lists[m.Dir])) {
			if d := lists[m.Dir][path]; d.version != highest[path] {
				lags = append(lags, Lag{Module: m.Dir, Path: path, Version: d.version, Highest: highest[path], replaced: d.replaced})
			}
		}
	}
	return lags, nil
}

// Align raises every lagging dependency and tidies the modules it changed,
// until no module lags: a raise can pull in higher versions of others.
func Align(root string) error {
	for round := 1; ; round++ {
		lags, err := Check(root)
		if err != nil {
			return err
		}
		if len(lags) == 0 {
			return nil
		}
		if round > 10 {
			return fmt.Errorf("still %d lagging dependencies after %d rounds, first: %s", len(lags), round-1, lags[0])
		}
		changed := map[string][]string{}
		for _, l := range lags {
			edit := "-require=" + l.Path + "@" + l.Highest
			if l.replaced {
				edit = "-replace=" + l.Path + "=" + l.Path + "@" + l.Highest
			}
			changed[l.Module] = append(changed[l.Module], edit)
		}
		for _, m := range slices.Sorted(maps.Keys(changed)) {
			dir := filepath.Join(root, m)
			if _, err := goIn(dir, append([]string{"mod", "edit"}, changed[m]...)...); err != nil {
				return err
			}
			if _, err := goIn(dir, "mod", "tidy"); err != nil {
				return err
			}
		}
	}
}

// built lists the modules whose packages go into the packages named, at the
// versions built. Modules replaced by a directory are left out.
func built(dir, packages string) (map[string]dependency, error) {
	out, err := goIn(dir, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}} {{with .Replace}}{{if .Version}}{{.Version}}{{else}}dir{{end}}{{end}}{{end}}{{end}}", packages)
	if err != nil {
		return nil, err
	}
	list := map[string]dependency{}
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		f := strings.Fields(s.Text())
		switch len(f) {
		case 2:
			list[f[0]] = dependency{version: f[1]}
		case 3:
			if f[2] != "dir" {
				list[f[0]] = dependency{version: f[2], replaced: true}
			}
		}
	}
	return list, s.Err()
}

// goIn runs the go command in dir with the workspace off, as the builds do.
func goIn(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// readonly: a check never changes a go.mod or go.sum; Align changes them
	// with go mod edit and tidy only.
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s in %s: %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
