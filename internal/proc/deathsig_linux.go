package proc

import "syscall"

// setParentDeathSignal has the kernel kill the child when its parent dies.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
