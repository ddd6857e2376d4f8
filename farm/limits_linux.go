package farm

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// freeSpace returns the bytes an unprivileged user may still write on the
// file system of dir.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// fsFull reports whether the file system of dir has no block or no inode
// left.
func fsFull(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Bavail == 0 || (st.Files > 0 && st.Ffree == 0)
}

// mountJobTmpfs mounts at dir a tmpfs of size bytes holding at most files
// files and directories, mode 0700, with no device, set-user-ID or
// executable file.
func mountJobTmpfs(dir string, size int64, files int) error {
	// The root directory is one of the tmpfs's inodes.
	data := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", size, files+1)
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC)
	if err := syscall.Mount("offcc-job", dir, "tmpfs", flags, data); err != nil {
		return fmt.Errorf("cannot mount a tmpfs on %s: %v", dir, err)
	}
	return nil
}

// unmountJobTmpfs detaches the tmpfs at dir (lazily: a process still
// holding it keeps it alive, out of every path, until it lets go).
func unmountJobTmpfs(dir string) error {
	if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("cannot unmount %s: %v", dir, err)
	}
	return nil
}

// mountsUnder returns the mount points beneath dir, deepest first, from
// /proc/self/mountinfo.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMountPath(fields[4])
		if strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	// Deepest first: a mount on top of another goes before it.
	for i, j := 0, len(points)-1; i < j; i, j = i+1, j-1 {
		points[i], points[j] = points[j], points[i]
	}
	return points, sc.Err()
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountStale detaches every mount beneath dir (a job directory of a
// worker that died), so that the directory can go.
func unmountStale(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	points, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	for _, p := range points {
		if err := unmountJobTmpfs(p); err != nil {
			return err
		}
	}
	return nil
}
