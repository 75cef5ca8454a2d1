package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var runStart = time.Now()

// logf prints a progress line with the time since the run started.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%7.1fs] %s\n", time.Since(runStart).Seconds(), fmt.Sprintf(format, args...))
}

func itoa(n int) string { return strconv.Itoa(n) }
