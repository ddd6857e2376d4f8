// Command sandbox-attacker stands for a tool taken over by a crafted input:
// the farm package's sandbox tests run it as a job's tool. Its first
// argument names one attack, which it tries; it prints what happened and
// exits 0 only if the attack SUCCEEDED (1 when it was refused; other
// statuses or signals when the kernel stopped it). Built static
// (CGO_ENABLED=0) so that it needs nothing of the sandbox but itself.
package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: sandbox-attacker ATTACK ARGS...")
		os.Exit(2)
	}
	err := attack(os.Args[1], os.Args[2:])
	if err != nil {
		fmt.Printf("refused: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	fmt.Printf("ATTACK SUCCEEDED: %s %s\n", os.Args[1], strings.Join(os.Args[2:], " "))
}

func attack(name string, args []string) error {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		fmt.Fprintf(os.Stderr, "%s: missing argument %d\n", name, i+1)
		os.Exit(2)
		return ""
	}
	num := func(i int) int64 {
		n, err := strconv.ParseInt(arg(i), 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(2)
		}
		return n
	}
	switch name {
	case "noop": // a legitimate job: read an input, write an output
		if len(args) > 0 {
			if _, err := os.ReadFile(args[0]); err != nil {
				return err
			}
		}
		if len(args) > 1 {
			return os.WriteFile(args[1], []byte("out\n"), 0o644)
		}
		return nil
	case "read": // read a file
		b, err := os.ReadFile(arg(0))
		if err == nil {
			fmt.Printf("read %d bytes: %.40q\n", len(b), b)
		}
		return err
	case "readdir": // PATH [NAME]: list a directory (and find NAME there)
		ents, err := os.ReadDir(arg(0))
		if err != nil {
			return err
		}
		fmt.Printf("%d entries\n", len(ents))
		if len(args) > 1 {
			for _, e := range ents {
				if e.Name() == args[1] {
					return nil
				}
			}
			return fmt.Errorf("no %s among the %d entries", args[1], len(ents))
		}
		return nil
	case "write": // create or overwrite a file
		return os.WriteFile(arg(0), []byte("pwned\n"), 0o644)
	case "append": // write into an existing file
		f, err := os.OpenFile(arg(0), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString("pwned\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	case "chmod":
		return os.Chmod(arg(0), 0o666)
	case "remove":
		return os.Remove(arg(0))
	case "rename": // FILE NEWNAME
		return os.Rename(arg(0), arg(1))
	case "link-write": // FILE LINK: hard-link FILE, then write through the link
		if err := os.Link(arg(0), arg(1)); err != nil {
			return err
		}
		f, err := os.OpenFile(arg(1), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("pwned\n")
		return err
	case "connect": // ADDR: a TCP connection, reading the listener's line
		c, err := net.DialTimeout("tcp", arg(0), 3*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil {
			fmt.Printf("got %q\n", line)
		}
		return err
	case "connect-mptcp": // ADDR: the same over MPTCP, which Landlock's TCP rights do not cover
		ap, err := netip.ParseAddrPort(arg(0))
		if err != nil {
			return err
		}
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 262 /* IPPROTO_MPTCP */)
		if err != nil {
			return fmt.Errorf("socket: %v", err)
		}
		defer syscall.Close(fd)
		if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
			return fmt.Errorf("connect: %v", err)
		}
		buf := make([]byte, 100)
		n, err := syscall.Read(fd, buf)
		if err == nil {
			fmt.Printf("got %q\n", buf[:max(n, 0)])
		}
		return err
	case "socket": // FAMILY: open a socket of that address family (a number; 40 is AF_VSOCK)
		fd, err := syscall.Socket(int(num(0)), syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.Close(fd)
		}
		return err
	case "udp": // ADDR TOKEN: send a datagram, read the listener's answer
		c, err := net.Dial("udp", arg(0))
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err = c.Write([]byte(arg(1))); err != nil {
			return err
		}
		c.SetDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 100)
		n, err := c.Read(buf)
		if err == nil {
			fmt.Printf("got %q\n", buf[:n])
		}
		return err
	case "listen": // ADDR: bind a TCP port
		l, err := net.Listen("tcp", arg(0))
		if err != nil {
			return err
		}
		fmt.Printf("listening on %s\n", l.Addr())
		return l.Close()
	case "exec": // PATH ARGS...: execute another program
		err := syscall.Exec(arg(0), args, os.Environ())
		return err
	case "exec-copy": // DIR: copy this program into DIR, then execute the copy
		self, err := os.ReadFile("/proc/self/exe")
		if err != nil {
			return err
		}
		p := filepath.Join(arg(0), "evil")
		if err := os.WriteFile(p, self, 0o755); err != nil {
			return err
		}
		return syscall.Exec(p, []string{p, "noop"}, os.Environ())
	case "fork": // N: start N processes that sleep
		self, _ := os.Executable()
		n := int(num(0))
		var kids []*os.Process
		defer func() {
			for _, k := range kids {
				k.Kill()
				k.Wait()
			}
		}()
		for i := 0; i < n; i++ {
			p, err := os.StartProcess(self, []string{self, "sleep", "30"}, &os.ProcAttr{})
			if err != nil {
				return fmt.Errorf("after %d processes: %v", i, err)
			}
			kids = append(kids, p)
		}
		return nil
	case "sleep": // SECONDS
		time.Sleep(time.Duration(num(0)) * time.Second)
		return nil
	case "alloc": // BYTES: allocate and touch them
		n := num(0)
		b := make([]byte, n)
		for i := int64(0); i < n; i += 4096 {
			b[i] = 1
		}
		fmt.Printf("allocated %d bytes\n", len(b))
		return nil
	case "bigfile": // PATH BYTES: write a file that big
		f, err := os.Create(arg(0))
		if err != nil {
			return err
		}
		defer f.Close()
		buf := make([]byte, 1<<20)
		for left := num(1); left > 0; {
			n := min(left, int64(len(buf)))
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			left -= n
		}
		return f.Close()
	case "cpu": // SECONDS: spin that long
		end := time.Now().Add(time.Duration(num(0)) * time.Second)
		x := 0
		for time.Now().Before(end) {
			for i := 0; i < 1000000; i++ {
				x += i
			}
		}
		fmt.Println(x)
		return nil
	case "daemon", "daemon-wait": // TOKEN: leave a setsid, double-forked process behind
		self, _ := os.Executable()
		mid := exec.Command(self, "daemon-mid", arg(0))
		mid.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := mid.Run(); err != nil {
			return err
		}
		for i := 0; ; i++ {
			if _, err := os.Stat("daemon.pid"); err == nil {
				break
			}
			if i == 500 {
				return fmt.Errorf("the daemon did not start")
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("daemon started")
		if name == "daemon-wait" {
			time.Sleep(time.Hour)
		}
		return nil
	case "daemon-mid":
		self, _ := os.Executable()
		d := exec.Command(self, "daemon-sleep", arg(0))
		d.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return d.Start() // and exit: the daemon is an orphan
	case "daemon-sleep":
		os.WriteFile("daemon.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
		time.Sleep(60 * time.Second)
		return nil
	case "proc": // NAME: see other processes in /proc (one whose program is named NAME, or many)
		ents, err := os.ReadDir("/proc")
		if err != nil {
			return err
		}
		n := 0
		for _, e := range ents {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			n++
			b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			argv0, _, _ := strings.Cut(string(b), "\x00")
			if filepath.Base(argv0) == arg(0) {
				fmt.Printf("found process %s: %.200q\n", e.Name(), b)
				return nil
			}
		}
		if n > 8 {
			fmt.Printf("%d processes\n", n)
			return nil
		}
		return fmt.Errorf("only %d processes, none of the host's", n)
	case "kill": // PID: may signal it (signal 0)
		return syscall.Kill(int(num(0)), 0)
	case "env": // NAME: the variable leaked into the job
		if v, ok := os.LookupEnv(arg(0)); ok {
			fmt.Printf("%s=%s\n", arg(0), v)
			return nil
		}
		return fmt.Errorf("not set")
	case "id": // print the ids (never an attack)
		groups, _ := syscall.Getgroups()
		fmt.Printf("uid=%d gid=%d euid=%d groups=%v\n", syscall.Getuid(), syscall.Getgid(), syscall.Geteuid(), groups)
		return nil
	case "cat": // copy stdin to a file (never an attack)
		f, err := os.Create(arg(0))
		if err != nil {
			return err
		}
		_, err = io.Copy(f, os.Stdin)
		f.Close()
		return err
	}
	fmt.Fprintf(os.Stderr, "unknown attack %q\n", name)
	os.Exit(2)
	return nil
}
