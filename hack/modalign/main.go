// Command modalign gives every module a cold `make local-run` builds the same
// version of each dependency they have in common: the highest any of them
// needs. Go's build cache keys a compiled package by its source and by its
// dependencies' builds, so one version of client-go, apiserver and the rest
// is compiled once (for kube-apiserver) and served from the cache to the
// Crossplane CLI, Crossplane core, the provider, the function and the stack.
//
//	go run ./hack/modalign          raise what lags, then go mod tidy
//	go run ./hack/modalign -check   list what lags; exit 1 if anything does
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	check := flag.Bool("check", false, "list the modules that lag instead of raising them")
	flag.Parse()
	root, err := repositoryRoot()
	if err != nil {
		fail(err)
	}
	if *check {
		lags, err := Check(root)
		if err != nil {
			fail(err)
		}
		for _, l := range lags {
			fmt.Println(l)
		}
		if len(lags) > 0 {
			fmt.Fprintln(os.Stderr, "modules lag: run go run ./hack/modalign")
			os.Exit(1)
		}
		return
	}
	if err := Align(root); err != nil {
		fail(err)
	}
}

// repositoryRoot is the nearest directory above the working one that holds
// hack/modalign.
func repositoryRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "hack", "modalign")); err == nil {
			return dir, nil
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("no hack/modalign above %s", wd)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "modalign:", err)
	os.Exit(1)
}
