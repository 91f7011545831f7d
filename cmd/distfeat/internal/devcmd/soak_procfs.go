//go:build dev

package devcmd

// /proc sampling: resident memory of the workers and the machine's load (Linux).

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// sampleProc refreshes RSS and peak RSS from /proc (no-op once the process is gone).
func (w *soakWorker) sampleProc() {
	if !w.running() {
		return
	}
	rss, hwm, err := procMemory(w.cmd.Process.Pid)
	if err != nil {
		return
	}
	w.rss = rss
	if hwm > w.hwm {
		w.hwm = hwm
	}
}

// procMemory reads VmRSS and VmHWM (peak RSS) of a process, in bytes (Linux).
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		v, perr := strconv.ParseInt(f[0], 10, 64)
		if perr != nil {
			continue
		}
		if name == "VmRSS" {
			rss = v << 10
		} else {
			hwm = v << 10
		}
	}
	if rss == 0 && hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS/VmHWM", pid)
	}
	return rss, hwm, nil
}

// loadAvg is /proc/loadavg's 1, 5 and 15 minute load averages ("?" elsewhere).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
