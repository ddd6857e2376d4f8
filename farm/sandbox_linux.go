package farm

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// Landlock (Linux 5.13+): the worker's jobs run under a ruleset that lets
// them create, write, rename and remove files only beneath their job
// directory (and write /dev/null), whatever options they were given: a
// second wall behind the command-line checks. Reads are not restricted
// (clang's reads of shipped files go through the VFS overlay, which does
// not fall through).

const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1 << 0
	landlockRulePathBeneath      = 1

	accessWriteFile  = 1 << 1
	accessRemoveDir  = 1 << 4
	accessRemoveFile = 1 << 5
	accessMakeChar   = 1 << 6
	accessMakeDir    = 1 << 7
	accessMakeReg    = 1 << 8
	accessMakeSock   = 1 << 9
	accessMakeFifo   = 1 << 10
	accessMakeBlock  = 1 << 11
	accessMakeSym    = 1 << 12
	accessRefer      = 1 << 13 // ABI 2
	accessTruncate   = 1 << 14 // ABI 3

	prSetNoNewPrivs = 38
	oPath           = 0x200000 // O_PATH
)

// SandboxABI returns the Landlock ABI version the kernel offers, 0 when it
// offers none (too old, or disabled).
func SandboxABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// writeAccess is every write-type right the ABI knows.
func writeAccess(abi int) uint64 {
	a := uint64(accessWriteFile | accessRemoveDir | accessRemoveFile | accessMakeChar | accessMakeDir |
		accessMakeReg | accessMakeSock | accessMakeFifo | accessMakeBlock | accessMakeSym)
	if abi >= 2 {
		a |= accessRefer
	}
	if abi >= 3 {
		a |= accessTruncate
	}
	return a
}

// SandboxMain is "offcc __farm-sandbox DIR -- TOOL ARGS...": it restricts
// the process's writes to DIR (and /dev/null) and executes TOOL. It
// returns only on failure, with an exit status.
func SandboxMain(args []string) int {
	if len(args) < 3 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "offcc: error: __farm-sandbox: usage: __farm-sandbox DIR -- TOOL ARGS...")
		return 2
	}
	dir, argv := args[0], args[2:]
	if err := restrictWrites(dir); err != nil {
		fmt.Fprintf(os.Stderr, "offcc: error: __farm-sandbox: %v\n", err)
		return 2
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintf(os.Stderr, "offcc: error: __farm-sandbox: cannot run %s: %v\n", argv[0], err)
	return 2
}

// restrictWrites applies the ruleset to the calling thread, which must
// then execute the tool (Landlock binds threads, and exec keeps it).
func restrictWrites(dir string) error {
	abi := SandboxABI()
	if abi == 0 {
		return fmt.Errorf("Landlock is not available")
	}
	runtime.LockOSThread() // never unlocked: this thread execs
	handled := writeAccess(abi)
	attr := struct{ handledFS uint64 }{handled}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if errno != 0 {
		return fmt.Errorf("landlock_create_ruleset: %v", errno)
	}
	defer syscall.Close(int(fd))
	allow := func(path string, access uint64) error {
		pfd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(pfd)
		var rule [12]byte
		*(*uint64)(unsafe.Pointer(&rule[0])) = access
		*(*int32)(unsafe.Pointer(&rule[8])) = int32(pfd)
		if _, _, errno := syscall.Syscall6(sysLandlockAddRule, fd, landlockRulePathBeneath, uintptr(unsafe.Pointer(&rule[0])), 0, 0, 0); errno != 0 {
			return fmt.Errorf("landlock_add_rule %s: %v", path, errno)
		}
		return nil
	}
	if err := allow(dir, handled); err != nil {
		return err
	}
	fileRights := uint64(accessWriteFile)
	if abi >= 3 {
		fileRights |= accessTruncate
	}
	if err := allow(os.DevNull, fileRights); err != nil {
		return err
	}
	if _, _, errno := syscall.Syscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %v", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock_restrict_self: %v", errno)
	}
	return nil
}
