package membudget_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/offcc/offcc/internal/cgrouptest"
	. "github.com/offcc/offcc/internal/membudget"
)

// envHelper makes the test binary, run as a command, act as a helper
// process instead of running tests: "alloc N" touches N bytes, prints
// "ready" and waits for its stdin to close; "discover" prints Discover's
// answer; "oom N" runs "alloc N" as its child and prints its OOMKills
// before and after; "ledger DIR N" reserves N bytes in DIR's ledger,
// prints "reserved" and waits for its stdin to close.
const envHelper = "MEMBUDGET_TEST_HELPER"

const mib = 1 << 20

func TestMain(m *testing.M) {
	if h := os.Getenv(envHelper); h != "" {
		os.Exit(helper(strings.Fields(h)))
	}
	os.Exit(m.Run())
}

func helper(args []string) int {
	switch args[0] {
	case "alloc":
		n, _ := strconv.Atoi(args[1])
		b := make([]byte, n)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("ready")
		bufio.NewReader(os.Stdin).ReadString('\n')
		return int(b[0]) - 1
	case "discover":
		b, err := Discover(0, System())
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Printf("%d\n%s\n", b.Bytes, b.Source)
	case "oom":
		b, err := Discover(0, System())
		if err != nil {
			fmt.Println(err)
			return 1
		}
		before, ok := b.OOMKills()
		cmd := helperCmd("alloc", args[1])
		cmd.Stdin = strings.NewReader("")
		err = cmd.Run()
		after, _ := b.OOMKills()
		fmt.Printf("%d %d %v %v\n", before, after, ok, err)
	case "ledger":
		l, err := OpenLedger(args[1])
		if err != nil {
			fmt.Println(err)
			return 1
		}
		n, _ := strconv.ParseInt(args[2], 10, 64)
		if ok, err := l.Reserve(n, n, false); !ok || err != nil {
			fmt.Println("refused", err)
			return 1
		}
		fmt.Println("reserved")
		bufio.NewReader(os.Stdin).ReadString('\n')
	}
	return 0
}

func helperCmd(args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envHelper+"="+strings.Join(args, " "))
	return cmd
}

// startHelper starts a helper that waits on its stdin, once it has
// printed want; the test's end kills it.
func startHelper(t *testing.T, cmd *exec.Cmd, want string) *exec.Cmd {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("helper printed %q, want %q", line, want)
	}
	return cmd
}

func TestPeakOfRunningProcess(t *testing.T) {
	cmd := startHelper(t, helperCmd("alloc", strconv.Itoa(64*mib)), "ready")
	p, ok := PeakOf(cmd.Process.Pid)
	if !ok || p < 64*mib || p > 256*mib {
		t.Errorf("PeakOf a process that touched 64 MiB = %d MiB, %v", p/mib, ok)
	}
	if r, ok := RSSOf(cmd.Process.Pid); !ok || r < 64*mib {
		t.Errorf("RSSOf = %d MiB, %v; want at least 64", r/mib, ok)
	}
	// A shell that runs it as its child: the child's peak counts.
	sh := exec.Command("/bin/sh", "-c", `"$0"; exit 0`, os.Args[0])
	sh.Env = append(os.Environ(), envHelper+"=alloc "+strconv.Itoa(64*mib))
	startHelper(t, sh, "ready")
	if p, ok := PeakOf(sh.Process.Pid); !ok || p < 64*mib {
		t.Errorf("PeakOf a shell whose child touched 64 MiB = %d MiB, %v", p/mib, ok)
	}
}

func TestDiscoverInCgroup(t *testing.T) {
	g := cgrouptest.New(t, 600*mib)
	cmd := helperCmd("discover")
	cmd = g.Command(cmd.Path)
	cmd.Env = append(os.Environ(), envHelper+"=discover")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("discover in a 600 MiB cgroup: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	b, _ := strconv.ParseInt(lines[0], 10, 64)
	t.Logf("in a 600 MiB cgroup: %d MiB from %s", b/mib, lines[1])
	if b < 560*mib || b > 600*mib {
		t.Errorf("budget in a 600 MiB cgroup = %d MiB, want about 600", b/mib)
	}
	if !strings.HasPrefix(lines[1], "cgroup ") || !strings.HasSuffix(lines[1], " 600 MiB") {
		t.Errorf("source = %q, want the cgroup's 600 MiB limit", lines[1])
	}
}

func TestOOMKillsRisesWhenChildIsKilled(t *testing.T) {
	g := cgrouptest.New(t, 128*mib)
	cmd := g.Command(helperCmd().Path)
	cmd.Env = append(os.Environ(), envHelper+"=oom "+strconv.Itoa(512*mib))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oom helper: %v: %s", err, out)
	}
	var before, after int
	var ok bool
	var rest string
	fmt.Sscanf(string(out), "%d %d %t", &before, &after, &ok)
	if _, r, found := strings.Cut(strings.TrimSpace(string(out)), " true "); found {
		rest = r
	}
	if !ok || after != before+1 || rest != "signal: killed" {
		t.Errorf("OOMKills across a child's OOM kill: %q, want it up by one and the child killed", out)
	}
	if g.OOMKills() != 1 {
		t.Errorf("cgroup's own count = %d, want 1", g.OOMKills())
	}
}

func TestLedgerGoroutines(t *testing.T) {
	dir := t.TempDir()
	const budget, workers, rounds = 5, 8, 40
	shared, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		l := shared
		if w%2 == 1 { // half of them with a Ledger of their own
			if l, err = OpenLedger(dir); err != nil {
				t.Fatal(err)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				ok, err := l.Reserve(1, budget, false)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok {
					time.Sleep(time.Millisecond)
					continue
				}
				h := held.Add(1)
				for {
					p := peak.Load()
					if h <= p || peak.CompareAndSwap(p, h) {
						break
					}
				}
				time.Sleep(100 * time.Microsecond)
				held.Add(-1)
				if err := l.Release(1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > budget || p < 2 {
		t.Errorf("at most %d reservations held at once, want 2..%d", p, budget)
	}
	if o := shared.Others(); o != 0 || shared.Mine() != 0 {
		t.Errorf("after all released: others %d, mine %d", o, shared.Mine())
	}
}

func TestLedgerSharedAndReleasedByKill(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 600 * mib
	child := startHelper(t, helperCmd("ledger", dir, strconv.Itoa(400*mib)), "reserved")
	if o := l.Others(); o != 400*mib {
		t.Errorf("Others = %d MiB while another process holds 400", o/mib)
	}
	if ok, _ := l.Reserve(300*mib, budget, false); ok {
		t.Errorf("reserved 300 MiB of 600 beside another process's 400")
	}
	if ok, _ := l.Reserve(200*mib, budget, false); !ok {
		t.Errorf("refused 200 MiB of 600 beside another process's 400")
	}
	if ok, _ := l.Reserve(300*mib, budget, true); !ok {
		t.Errorf("refused a forced reservation")
	}
	if err := l.Release(500 * mib); err != nil {
		t.Fatal(err)
	}
	// A second process is refused while the first holds its share.
	if out, err := helperCmd("ledger", dir, strconv.Itoa(300*mib)).Output(); err == nil {
		t.Errorf("a second process reserved 300 MiB of 600 beside 400: %s", out)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	if o := l.Others(); o != 0 {
		t.Errorf("Others = %d MiB after the holder was killed, want 0", o/mib)
	}
	if ok, _ := l.Reserve(600*mib, budget, false); !ok {
		t.Errorf("refused the whole budget after the other holder was killed")
	}
}

func TestLedgerCorruptFileStartsAfresh(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := l.Reserve(10, 100, false); !ok || err != nil {
		t.Fatalf("Reserve: %v %v", ok, err)
	}
	other, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, junk := range []string{"\x00\x01garbage", LedgerHeader + "1 2 3\n", LedgerHeader + "99999999 1 x 999999999\n"} {
		if err := os.WriteFile(l.Path(), []byte(junk), 0o600); err != nil {
			t.Fatal(err)
		}
		if ok, err := l.Reserve(90, 100, false); !ok || err != nil {
			t.Errorf("Reserve after the file became %q: %v %v", junk, ok, err)
		}
		l.Release(90)
		if o := other.Others(); o != 10 {
			data, _ := os.ReadFile(l.Path())
			t.Errorf("ledger after %q: %q, want the other Ledger's 10 bytes alone", junk, data)
		}
	}
}

func TestLedgerUnwritableFallsBackToOwnReservations(t *testing.T) {
	dir := t.TempDir()
	l, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A directory where the file should be: it cannot be opened for
	// writing, even by root.
	os.Remove(l.Path())
	if err := os.Mkdir(l.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	ok, err := l.Reserve(50, 100, false)
	if !ok || err == nil {
		t.Errorf("Reserve with no ledger file: %v, %v; want ok and an error", ok, err)
	}
	if ok, _ := l.Reserve(60, 100, false); ok {
		t.Errorf("Reserve beyond the budget with no ledger file: ok")
	}
	if err := l.Release(50); err == nil || l.Mine() != 0 {
		t.Errorf("Release with no ledger file: %v, mine %d; want an error and 0", err, l.Mine())
	}
}

func BenchmarkLedgerReserveRelease(b *testing.B) {
	l, err := OpenLedger(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		l.Reserve(1, 100, false)
		l.Release(1)
	}
}

// TestLedgerFileGoesWithItsLastEntry: the ledger file exists only while
// some process holds a reservation in it, so no build leaves one behind in
// /dev/shm; one removed under a process that opened it is made again.
func TestLedgerFileGoesWithItsLastEntry(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path()); !os.IsNotExist(err) {
		t.Errorf("an empty ledger file after OpenLedger: %v", err)
	}
	b, err := OpenLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Reserve(60, 100, false); !ok {
		t.Fatal("Reserve(60) refused")
	}
	if ok, _ := b.Reserve(30, 100, false); !ok {
		t.Fatal("Reserve(30) refused")
	}
	a.Release(60)
	if _, err := os.Stat(a.Path()); err != nil {
		t.Errorf("the ledger went while b holds 30 bytes: %v", err)
	}
	if o := a.Others(); o != 30 {
		t.Errorf("a sees %d bytes of others, want 30", o)
	}
	b.Close()
	if _, err := os.Stat(a.Path()); !os.IsNotExist(err) {
		t.Errorf("the ledger outlived its last entry: %v", err)
	}
	if ok, _ := a.Reserve(100, 100, false); !ok || b.Others() != 100 {
		t.Errorf("after the file went: Reserve(100) %v, b sees %d", ok, b.Others())
	}
	a.Close()
	if _, err := os.Stat(a.Path()); !os.IsNotExist(err) {
		t.Errorf("the ledger outlived its last entry: %v", err)
	}
}
