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
