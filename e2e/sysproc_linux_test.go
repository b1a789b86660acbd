package e2e

import "syscall"

// childAttr makes the kernel SIGKILL a server whose test process died (e.g. on a -timeout panic),
// so no server outlives its test.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
