package main

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// userHZ is the unit of the times in /proc/<pid>/stat, fixed by Linux's
// user-space interface whatever the kernel's own tick rate.
const userHZ = 100

// processCPU returns the CPU time, user and system, that the process pid
// has used, from /proc on Linux; false elsewhere or when it cannot be read.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	return parseStat(b)
}

// parseStat reads utime and stime from the text of /proc/<pid>/stat.
func parseStat(b []byte) (time.Duration, bool) {
	// The command name, field 2, is in parentheses and may hold spaces and
	// parentheses; utime and stime are fields 14 and 15, the 12th and 13th
	// after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// threadsCPU returns the CPU time the live threads of process pid have
// used, to the nanosecond, from /proc/<pid>/task/*/schedstat on Linux;
// false elsewhere or when it cannot be read. Unlike processCPU, whose
// unit is 10 ms, it can time a run of a few requests; it misses the time
// of threads that have exited, which a Go server's threads seldom do.
func threadsCPU(pid int) (time.Duration, bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil || len(tasks) == 0 {
		return 0, false
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(dir + "/" + task.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := bytes.Fields(b)
		if len(f) < 1 {
			return 0, false
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, false
		}
		sum += time.Duration(ns)
	}
	return sum, true
}

// cpuMeter measures the CPU time the harness and, when known, the server
// process spend during a run.
type cpuMeter struct {
	serverPID int // 0 when the server is not this harness's child
	// fine reads the server's time from its threads, to the nanosecond
	// (threadsCPU), instead of the process's 10 ms ticks.
	fine bool
}

// cpuSample is the CPU time used so far.
type cpuSample struct {
	self, server     time.Duration
	selfOK, serverOK bool
}

func (m cpuMeter) sample() cpuSample {
	var s cpuSample
	s.self, s.selfOK = processCPU(os.Getpid())
	switch {
	case m.serverPID == 0:
	case m.fine:
		s.server, s.serverOK = threadsCPU(m.serverPID)
	default:
		s.server, s.serverOK = processCPU(m.serverPID)
	}
	return s
}

// cpuUse is the CPU time spent between two samples; a part that could not
// be measured is negative.
type cpuUse struct{ harness, server time.Duration }

func (a cpuSample) until(b cpuSample) cpuUse {
	u := cpuUse{harness: -1, server: -1}
	if a.selfOK && b.selfOK {
		u.harness = b.self - a.self
	}
	if a.serverOK && b.serverOK {
		u.server = b.server - a.server
	}
	return u
}

func (u cpuUse) add(o cpuUse) cpuUse {
	if u.harness >= 0 && o.harness >= 0 {
		u.harness += o.harness
	} else {
		u.harness = -1
	}
	if u.server >= 0 && o.server >= 0 {
		u.server += o.server
	} else {
		u.server = -1
	}
	return u
}
