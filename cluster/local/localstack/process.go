package localstack

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/kyma-project/provider-eventing-auth/test/support/benchfig"
	"github.com/kyma-project/provider-eventing-auth/test/support/testnet"
)

// process is a program the stack started, logging into the work directory.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// start runs a program with its output in <work>/<name>.log.
func (s *Stack) start(name string, env []string, bin string, args ...string) (*process, error) {
	log := filepath.Join(s.Work, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go func() { _ = cmd.Wait(); _ = f.Close(); close(p.done) }()
	return p, nil
}

// stop ends a process and waits for it.
func (p *process) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// Log is everything the process wrote.
func (p *process) Log() string {
	if p == nil {
		return ""
	}
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// Running tells whether the process has not exited.
func (p *process) Running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Tail is the end of a process's log, for error messages.
func (p *process) Tail() string {
	if p == nil {
		return "(not started)"
	}
	b := p.Log()
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return b
}

// FreeAddr returns a loopback address no one listens on, not handed out
// before in this process.
func FreeAddr() (string, error) { return testnet.FreeAddr() }

// waitListening waits until something accepts connections at addr.
func waitListening(ctx context.Context, p *process, addr string) error {
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("%s exited: %s", p.name, p.Tail())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not listen on %s: %w\n%s", p.name, addr, ctx.Err(), p.Tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Usage is what a process has used so far: CPU time, resident memory.
type Usage = benchfig.Usage

// Usage reads the process's use from /proc; zero once it has exited.
func (p *process) Usage() Usage {
	if p == nil || p.cmd.Process == nil {
		return Usage{}
	}
	return benchfig.UsageOf(p.cmd.Process.Pid)
}
