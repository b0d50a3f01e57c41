package localstack

import (
	"errors"
	"os"
	"path/filepath"
)

// RepoRoot is the repository's root directory: the nearest directory at or
// above the working directory that holds cluster/install.yaml. The local stack
// is a module of its own under cluster/local, run from there or from its e2e
// tests, and builds the packages from the repository around it.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "cluster", "install.yaml")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no cluster/install.yaml at or above the working directory: run from the provider-eventing-auth repository")
		}
		dir = parent
	}
}
