package localstack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TraceCommand is the Crossplane CLI command that shows runtime id's
// EventingAuth and everything composed for it, as a person would run it.
func (s *Stack) TraceCommand(id string) []string {
	return []string{filepath.Join(s.o.Tools, "crossplane"), "resource", "trace", "-n", KCPNamespace,
		crdEventingAuth + "/" + id}
}

// TraceNode is one resource in the trace's tree, with its conditions.
type TraceNode struct {
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
	Children []TraceNode `json:"children"`
}

// Condition is the status of the node's condition of type t, "" if none.
func (n TraceNode) Condition(t string) string {
	for _, c := range n.Object.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// String names the node as the trace does: Kind/name.
func (n TraceNode) String() string { return n.Object.Kind + "/" + n.Object.Metadata.Name }

// Walk calls fn for the node and every node below it.
func (n TraceNode) Walk(fn func(TraceNode)) {
	fn(n)
	for _, c := range n.Children {
		c.Walk(fn)
	}
}

// Trace runs TraceCommand with JSON output against the management cluster.
func (s *Stack) Trace(ctx context.Context, id string) (TraceNode, error) {
	args := s.TraceCommand(id)
	cmd := exec.CommandContext(ctx, args[0], append(args[1:], "-o", "json")...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.MgmtKubeconfig)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return TraceNode{}, fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	var root TraceNode
	if err := json.Unmarshal(out, &root); err != nil {
		return TraceNode{}, fmt.Errorf("trace output: %w", err)
	}
	return root, nil
}
