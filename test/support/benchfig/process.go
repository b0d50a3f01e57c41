package benchfig

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Usage is what a process has used so far, read from /proc.
type Usage struct {
	// CPU is its user and system time.
	CPU time.Duration
	// RSS and PeakRSS are its resident memory now and at most so far, in KiB.
	RSS, PeakRSS int64
}

// UsageOf reads the use of the process pid; zero when it is gone.
func UsageOf(pid int) Usage {
	var u Usage
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// Fields after the command name, which is in parentheses: utime and
		// stime are the 12th and 13th of them, in clock ticks (100 per second
		// on Linux).
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			f := strings.Fields(string(b)[i+1:])
			if len(f) > 12 {
				ut, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				u.CPU = time.Duration(ut+st) * 10 * time.Millisecond
			}
		}
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			kib, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "VmRSS:":
				u.RSS = kib
			case "VmHWM:":
				u.PeakRSS = kib
			}
		}
	}
	return u
}

// CPUByCommand sums the CPU time of every process on the machine by a name
// that name gives it from its command name (/proc/<pid>/comm) and command
// line, so that a window's share of each part of a stack can be told apart,
// also of processes a test did not start itself; nil names by command name.
func CPUByCommand(name func(comm string, args []string) string) map[string]time.Duration {
	out := map[string]time.Duration{}
	eachProcess(func(pid int, comm string, args func() []string) {
		if name != nil {
			comm = name(comm, args())
		}
		out[comm] += UsageOf(pid).CPU
	})
	return out
}

// CommandLines returns the command lines of the processes named comm.
func CommandLines(comm string) [][]string {
	var out [][]string
	eachProcess(func(_ int, c string, args func() []string) {
		if c == comm {
			out = append(out, args())
		}
	})
	return out
}

// eachProcess calls fn with every process's pid, command name and a reader
// of its command line (read only when asked for).
func eachProcess(fn func(pid int, comm string, args func() []string)) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		fn(pid, strings.TrimSpace(string(b)), func() []string {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			return strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		})
	}
}
