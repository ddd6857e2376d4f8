// Package services opens, for the driver, what a build uses beyond clang,
// its plan and the local build cache: the shared cache (Redis), the build
// farm's client and the progress line. The command (cmd/offcc) hands them
// to the driver as driver.Services; the driver decides when a build needs
// one, this package how it is opened. It sits between the two so that the
// driver depends on neither Redis nor the farm, and so that tests of the
// wiring need no main package.
package services

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/offcc/offcc/actions"
	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore"
	"github.com/offcc/offcc/driver"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/internal/progress"
	"github.com/offcc/offcc/target"
	"github.com/offcc/offcc/trust"
)

// New returns the services of one offcc process. The signing and trusted
// keys are read once, on first use, for the shared cache and the farm.
func New() *driver.Services {
	k := &keys{}
	return &driver.Services{
		SharedCache: k.sharedCache,
		Remote:      k.remote,
		Progress:    startProgress,
	}
}

// keys are the process's signing and trusted keys, read once for the
// shared cache and the build farm.
type keys struct {
	once sync.Once
	keys *trust.Settings
	err  error
}

// get returns the keys the environment names (trust.FromEnv), read on
// first use: the shared cache and the farm share one reading.
func (k *keys) get(getenv func(string) string) (*trust.Settings, error) {
	k.once.Do(func() { k.keys, k.err = trust.FromEnv(getenv) })
	return k.keys, k.err
}

// sharedCache connects c to the shared cache cfg.RemoteURL names. A bad
// URL or key setting (trust.FromEnv), or no trusted keys without
// OFFCC_REMOTE_CACHE_INSECURE=1, is a warning and c stays local.
func (k *keys) sharedCache(env driver.ServiceEnv, c *cache.Cache, cfg cache.Config) {
	name := redisstore.Redact(cfg.RemoteURL)
	keys, err := k.get(env.Getenv)
	if err != nil {
		env.Warn(fmt.Sprintf("shared cache %s: %v; using the local cache only", name, err))
		return
	}
	if why := cache.SharedCacheOff(keys.CacheWriters, cfg.RemoteInsecure); why != "" {
		env.Warn(fmt.Sprintf("shared cache %s: %s; using the local cache only", name, why))
		return
	}
	c.Keys = keys
	remote, err := redisstore.Open(cfg.RemoteURL, redisstore.Options{Compression: cfg.Compression})
	if err != nil {
		// The user's to fix, but no reason to fail the build: the
		// local cache goes on.
		env.Warn(fmt.Sprintf("OFFCC_REMOTE_CACHE: %v; using the local cache only", err))
		return
	}
	c.Remote, c.RemoteName = remote, name
}

// remote returns the build farm's client for req.URL and its close
// function. A bad URL or an unreachable server is a warning and nil: the
// build runs locally.
func (k *keys) remote(env driver.ServiceEnv, req driver.RemoteRequest) (actions.Remote, func()) {
	pickup := time.Duration(0)
	if v := env.Getenv("OFFCC_REMOTE_EXEC_PICKUP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			env.Warn(fmt.Sprintf("OFFCC_REMOTE_EXEC_PICKUP=%s is not a duration such as 2s; using 2s", v))
		} else {
			pickup = d
		}
	}
	store, err := redisstore.Open(req.URL, redisstore.Options{OpTimeout: 5 * time.Second})
	if err != nil {
		env.Warn(fmt.Sprintf("build farm: %v; running every job locally", err))
		return nil, nil
	}
	keys, err := k.get(env.Getenv)
	if err != nil {
		store.Close()
		env.Warn(fmt.Sprintf("build farm: %v; running every job locally", err))
		return nil, nil
	}
	insecure := false
	switch strings.ToLower(env.Getenv(farm.EnvInsecure)) {
	case "", "0", "off", "no", "false":
	default:
		insecure = true
	}
	noRace := false
	switch strings.ToLower(env.Getenv("OFFCC_REMOTE_EXEC_RACE")) {
	case "0", "off", "no", "false":
		noRace = true
	}
	client, err := farm.NewClient(store, farm.ClientOptions{
		Clang: req.Clang, Release: req.Release, TempDir: req.TempDir, Pickup: pickup, Keys: keys, Insecure: insecure, NoRace: noRace,
		Shell: req.Shell, Warn: env.Warn, Peaks: req.Peaks,
	})
	if err != nil {
		store.Close()
		env.Warn(fmt.Sprintf("build farm %s: %v; running every job locally", store.Name(), err))
		return nil, nil
	}
	return client, func() {
		client.Close()
		store.Close()
	}
}

// startProgress returns the build's status line, or nil when stderr is
// not a terminal, make synchronises output, or OFFCC_PROGRESS=0.
func startProgress(env driver.ServiceEnv, stderr io.Writer) driver.Progress {
	f, _ := stderr.(*os.File)
	if !progress.Enabled(f, env.Getenv) {
		return nil
	}
	return progressObserver{progress.New(stderr, progress.Options{Prog: env.Prog})}
}

// progressObserver shows the running actions of a build on a status line.
type progressObserver struct{ st *progress.Status }

// ActionStarted puts a on the status line.
func (p progressObserver) ActionStarted(a *actions.Action) {
	if a.Expand == nil { // an expanding action only plans; its children run
		p.st.Start(a, progressLabel(a))
	}
}

// ActionHit counts a job the cache served.
func (p progressObserver) ActionHit(*actions.Action) { p.st.Cached() }

// ActionFinished takes a off the status line.
func (p progressObserver) ActionFinished(a *actions.Action) { p.st.Stop(a) }

// Writer wraps w so that what is written erases the status line first.
func (p progressObserver) Writer(w io.Writer) io.Writer { return p.st.Writer(w) }

// Close erases the status line and stops it.
func (p progressObserver) Close() { p.st.Close() }

// progressLabel names an action on the status line: the device it
// compiles for ("gfx90a", "sm_90", "x86_64" for the host device), "host"
// for the host compile, "link" (with the device for a device link).
func progressLabel(a *actions.Action) string {
	arch := a.Target.Arch
	if arch == "" || arch == "generic" {
		arch = target.ArchName(a.Target.Triple)
	}
	switch a.Kind {
	case actions.DeviceLink:
		return "link " + arch
	case actions.Link, actions.HostLink:
		return "link"
	case actions.Preprocess, actions.Compile, actions.HostFrontend, actions.Backend, actions.Assemble,
		actions.DeviceCompile, actions.DeviceAssemble:
		if a.Device && arch != "" {
			return arch
		}
		return "host"
	}
	return a.Kind.String()
}
