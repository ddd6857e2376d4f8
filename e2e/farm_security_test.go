package e2e

// The build farm against an attacker who can write to its Redis server:
// job records put straight into Redis (unsigned, signed by a key nobody
// trusts, moved, tampered, and signed with the trusted client key of a
// compromised laptop), and a fake worker answering a real build's jobs.
// Every attack must end refused or harmless, with the worker still
// serving and the client's object equal to a local build's.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/offcc/offcc/cache"
	"github.com/offcc/offcc/cache/redisstore/redistest"
	"github.com/offcc/offcc/farm"
	"github.com/offcc/offcc/trust"
)

// farmTarget is what the attacks of a test aim at: one real worker, the
// crafted-job submitter, a source and its object, and the files that must
// stay as they are.
type farmTarget struct {
	c      compiler
	srv    *redistest.Server
	worker farm.WorkerInfo
	jobs   *farmJobs
	dir    string
	src    string // a C source, shipped by the crafted compiles
	obj    string // its object, built here, shipped by the crafted links
	out    string // the crafted jobs' output
	canary string // a file no job may make on the worker
	secret string // a file of the worker's no job may read
	clang  string
	lld    string
	flags  []string
}

// newFarmTarget starts a redis-server and one real worker, name, and
// returns the target of a test's attacks on it.
func newFarmTarget(t *testing.T, name string) *farmTarget {
	t.Helper()
	ft, _ := newFarmTargetDir(t, name)
	return ft
}

// newFarmTargetDir is newFarmTarget that also returns the worker's
// --dir: the directory its job directories are made in.
func newFarmTargetDir(t *testing.T, name string) (*farmTarget, string) {
	t.Helper()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	dir := workerDir(t)
	// The last --dir wins over startWorkerFlags' own.
	startWorkerFlags(t, c, srv.URL, name, []string{"--dir", dir})
	st := waitWorkers(t, c, srv.URL, name)
	w, _ := st.worker(name)
	ft := &farmTarget{c: c, srv: srv, worker: w, jobs: newFarmJobs(t, srv.URL, w.Toolchain), dir: t.TempDir(),
		clang: filepath.Join(llvmBin, "clang"), lld: filepath.Join(llvmBin, "lld"),
		flags: []string{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-O2"}}
	ft.src = filepath.Join(ft.dir, "in.c")
	ft.out = filepath.Join(ft.dir, "out.o")
	ft.obj = filepath.Join(ft.dir, "local.o")
	ft.canary = filepath.Join(t.TempDir(), "written-by-a-job")
	ft.secret = filepath.Join(t.TempDir(), "worker-secret.txt")
	if err := os.WriteFile(ft.src, []byte("int plus1(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ft.secret, []byte("SECRET-OF-THE-WORKER-7d41\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmdSpec{dir: ft.dir, name: ft.clang, args: args(ft.flags, "-o", ft.obj, "-x", "c", ft.src)}.mustRun(t)
	return ft, dir
}

// cc1 is a well-formed compile of src with extra arguments.
func (ft *farmTarget) cc1(extra ...string) farm.Job {
	return farm.Job{Tool: "clang", ToolID: farmToolID(ft.clang), Dir: ft.dir, Outputs: []string{ft.out},
		Args: args(ft.flags, "-o", ft.out, "-x", "c", ft.src, extra)}
}

// link is a well-formed link of obj with extra arguments, as a client
// sends it: for ld.lld, without -flavor (a worker refuses -flavor).
func (ft *farmTarget) link(extra ...string) farm.Job {
	return farm.Job{Tool: "lld", ToolID: farmToolID(ft.lld), Dir: ft.dir, Outputs: []string{ft.out},
		Args: args("-shared", "-o", ft.out, ft.obj, extra)}
}

// harmless fails the test where a job's result shows that it read the
// worker's files or wrote outside its directory.
func (ft *farmTarget) harmless(t *testing.T, res farm.Result, e *cache.Entry) {
	t.Helper()
	passwd, _ := os.ReadFile("/etc/passwd")
	first, _, _ := strings.Cut(string(passwd), "\n")
	for _, leak := range []string{first, "SECRET-OF-THE-WORKER-7d41"} {
		if leak != "" && (bytes.Contains(res.Stderr, []byte(leak)) || bytes.Contains(res.Stdout, []byte(leak))) {
			t.Errorf("the job's output holds the worker's file (%q):\n%s%s", leak, farmHead(res.Stdout), farmHead(res.Stderr))
		}
		for _, b := range e.Blobs {
			r, err := ft.jobs.store.OpenBlob(b)
			if err != nil {
				continue
			}
			var buf bytes.Buffer
			buf.ReadFrom(r)
			r.Close()
			if leak != "" && bytes.Contains(buf.Bytes(), []byte(leak)) {
				t.Errorf("the job's output %s holds the worker's file (%q)", b.Name, leak)
			}
		}
	}
	if _, err := os.Stat(ft.canary); err == nil {
		t.Errorf("the job wrote %s on the worker", ft.canary)
		os.Remove(ft.canary)
	}
}

// stillServes checks that the worker runs a real build's jobs after the
// attacks, and that the object is the local build's.
func (ft *farmTarget) stillServes(t *testing.T) {
	t.Helper()
	a := args(farmHIPFlags(t, "gfx906"), "-c", srcPath(t, "../hip/kernels.hip"))
	b := newFarmBuild(t, ft.c, ft.srv.URL, nil, append(a, "-o", "k.o")...)
	r := b.mustRun(t, ft.c)
	sameBytes(t, "the object built after the attacks", b.obj(), localObject(t, ft.c, a...))
	if remote := remoteLines(r.stderr); len(remote) == 0 {
		t.Errorf("after the attacks, the worker ran none of a real build's jobs:\n%s", r.stderr)
	}
}

// TestFarmSignedJobsOnly: a worker runs only job records a trusted client
// signed for that job. Records put straight into Redis unsigned, signed
// by a key nobody trusts, moved from another job, or changed after
// signing are refused without running, and the worker goes on serving.
// Its results are signed by its own key.
func TestFarmSignedJobsOnly(t *testing.T) {
	t.Parallel()
	ft := newFarmTarget(t, "signed")
	if len(ft.worker.Sandbox) == 0 || len(ft.worker.Insecure) != 0 || !strings.HasPrefix(ft.worker.Key, "worker ") {
		t.Errorf("the worker announces sandbox %q, insecure %q, key %q; want a sandbox, nothing insecure, the key \"worker\"",
			ft.worker.Sandbox, ft.worker.Insecure, ft.worker.Key)
	}
	workers, err := trust.LoadKeyring(farmKeys(t).path("worker.pub"))
	if err != nil {
		t.Fatal(err)
	}

	// The control: signed by the client key, run, and the result is
	// signed by the worker's key for this job.
	res, e := ft.jobs.run(t, ft.cc1(), ft.src)
	if res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
		t.Fatalf("a signed job: %+v (stderr %s)", res, res.Stderr)
	}
	if _, err := cache.VerifyEntry(workers, cache.SumBytes([]byte("offcc farm result\x00"+res.Job)), e); err != nil {
		t.Errorf("the worker's result: %v", err)
	}
	if res.Client != "client" || res.Toolchain != ft.worker.Toolchain || res.JobSum == "" {
		t.Errorf("the result names client %q, toolchain %q, job digest %q", res.Client, res.Toolchain, res.JobSum)
	}

	attacker := farmKeys(t).key(t, "attacker")
	client := farmKeys(t).key(t, "client")
	for _, tc := range []struct {
		name   string
		key    *trust.PrivateKey
		tamper func(*cache.Entry)
		why    string
	}{
		{"unsigned", nil, nil, "unsigned"},
		{"signed by an untrusted key", attacker, nil, "unknown key"},
		{"signature of another job", client, func(e *cache.Entry) {
			// A genuine signature, made for another job's entry.
			cache.SignEntry(client, cache.SumBytes([]byte("offcc farm job\x00another")), e)
		}, "does not match"},
		{"arguments changed after signing", client, func(e *cache.Entry) {
			e.Record = bytes.Replace(e.Record, []byte(`"-O2"`), []byte(`"-O0"`), 1)
		}, "does not match"},
		{"a blob's mode changed after signing", client, func(e *cache.Entry) {
			e.Blobs[0].Mode = 0o755
		}, "does not match"},
		{"a blob renamed after signing", client, func(e *cache.Entry) {
			e.Blobs[0].Name = "f9"
		}, "does not match"},
		{"the signature's key ID of the trusted client, the attacker's signature", attacker, func(e *cache.Entry) {
			e.Signature.Key = client.ID
		}, "does not match"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			ft.jobs.key = tc.key
			defer func() { ft.jobs.key = client }()
			res, e := ft.jobs.runWith(t, ft.cc1(), tc.tamper, ft.src)
			if res.Refused == "" || !strings.Contains(res.Refused, tc.why) {
				t.Errorf("want a refusal naming %q; got %+v", tc.why, res)
			}
			if len(e.Blobs) != 0 || res.RunMS != 0 {
				t.Errorf("the refused job ran: %d blobs, %d ms", len(e.Blobs), res.RunMS)
			}
		})
	}
	ft.stillServes(t)
}

// TestFarmCompromisedClient: jobs signed with the trusted client key (a
// compromised laptop) that try to run code, read or write the worker's
// files, flood it, or poison later jobs are refused by the allow-list or
// confined by the sandbox; later jobs of other clients compile what they
// ship; the worker goes on serving.
func TestFarmCompromisedClient(t *testing.T) {
	t.Parallel()
	ft := newFarmTarget(t, "target")
	script := filepath.Join(ft.dir, "handler.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat /etc/passwd "+ft.secret+"\ntouch "+ft.canary+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ldscript := filepath.Join(ft.dir, "evil.ld")
	if err := os.WriteFile(ldscript, []byte("INPUT("+ft.secret+")\nINPUT(/etc/passwd)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ship := func(j farm.Job, files ...string) (farm.Job, []string) { return j, files }
	for _, tc := range []struct {
		name  string
		job   farm.Job
		files []string
		why   string // what the refusal names
	}{
		{"lld error-handling script", ft.link("--no-undefined", "--error-handling-script="+script), []string{ft.obj, script}, "runs a program"},
		{"lld error-handling script, separate", ft.link("--error-handling-script", script), []string{ft.obj, script}, "runs a program"},
		{"a trailing option swallowing the overlay", ft.cc1("-main-file-name"), []string{ft.src}, "is missing"},
		{"a trailing -include swallowing the overlay", ft.cc1("-include"), []string{ft.src}, "is missing"},
		{"linker script INPUT(/abs)", ft.link("-T", ldscript), []string{ft.obj, ldscript}, "linker script"},
		{"single-dash -script=", ft.link("-script=" + ldscript), []string{ft.obj, ldscript}, "linker script"},
		{"--format=binary of a shipped file", ft.link("--format=binary", script), []string{ft.obj, script}, "not one of the device links' options"},
		{"--format=binary of the worker's file", ft.link("--format=binary", ft.secret), []string{ft.obj}, "not one of the device links' options"},
		{"-mllvm -info-output-file=", ft.cc1("-mllvm", "-info-output-file="+ft.canary, "-mllvm", "-stats"), []string{ft.src}, "outside the allow-list"},
		{"-plugin-opt=obj-path=", ft.link("--plugin-opt=obj-path=" + ft.canary), []string{ft.obj}, "not run on workers"},
		{"-plugin-opt=-info-output-file=", ft.link("-plugin-opt=-info-output-file=" + ft.canary), []string{ft.obj}, "outside the allow-list"},
		{"a relative include climbing out", ft.cc1("-include", "../../../../../../.."+ft.secret), []string{ft.src}, "does not ship"},
		{"an unclassified value naming the worker's file", ft.cc1("-fprofile-remapping-file=" + ft.secret), []string{ft.src}, "not ship"},
		{"-load", ft.cc1("-load", script), []string{ft.src, script}, "loads a plugin"},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "-"), func(t *testing.T) {
			j, files := ship(tc.job, tc.files...)
			res, e := ft.jobs.run(t, j, files...)
			if res.Refused == "" || !strings.Contains(res.Refused, tc.why) {
				t.Errorf("want a refusal naming %q; got refused %q, exit code %d, stderr:\n%s", tc.why, res.Refused, res.Code, farmHead(res.Stderr))
			}
			ft.harmless(t, res, e)
		})
	}

	// Poisoning: a job whose output is named like its input does not
	// change the input a later job (another client's) is given.
	t.Run("output-named-as-input", func(t *testing.T) {
		j := ft.cc1()
		j.Outputs = []string{ft.src}
		j.Args = args(ft.flags, "-o", ft.src, "-x", "c", ft.src)
		res, e := ft.jobs.run(t, j, ft.src)
		ft.harmless(t, res, e)
		res, e = ft.jobs.run(t, ft.cc1(), ft.src)
		if res.Refused != "" || res.Code != 0 || len(e.Blobs) != 1 {
			t.Fatalf("the job after: %+v", res)
		}
		if want := farmBlobOf(t, ft.obj, "o0"); e.Blobs[0].Sum != want.Sum {
			t.Errorf("the job after compiled something else than its source: its object differs from clang's here")
		}
	})

	// A diagnostics flood is cut at 1 MiB, with a note, and the worker
	// stores a small record.
	t.Run("stderr-flood", func(t *testing.T) {
		flood := filepath.Join(ft.dir, "flood.c")
		var src bytes.Buffer
		for i := 0; i < 40000; i++ {
			fmt.Fprintf(&src, "#warning %s\n", strings.Repeat("flood ", 12))
		}
		if err := os.WriteFile(flood, src.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		j := ft.cc1()
		j.Args = args(ft.flags, "-ferror-limit", "0", "-o", ft.out, "-x", "c", flood)
		res, e := ft.jobs.run(t, j, flood)
		if res.Refused != "" {
			t.Fatalf("refused: %s", res.Refused)
		}
		if n := len(res.Stderr); n > 1<<20+200 || n < 1<<20 {
			t.Errorf("stderr of %d bytes, want 1 MiB and a note", n)
		}
		if !bytes.Contains(res.Stderr, []byte("[offcc worker: output cut at 1048576 bytes;")) {
			t.Errorf("no note that the output was cut: ...%s", res.Stderr[max(0, len(res.Stderr)-200):])
		}
		if n := len(cache.EncodeIndex(e)); n > 3<<20 {
			t.Errorf("the result record is %d bytes", n)
		}
	})
	ft.stillServes(t)
}

// fakeWorker answers every job of a toolchain's stream with a result of
// its own making: a forged object (the bytes "FORGED DEVICE IMAGE") and
// exit code 0, signed by signer (nil: unsigned). It registers as a live
// worker so that clients send it jobs.
func fakeWorker(t *testing.T, url, toolchain, name string, signer *trust.PrivateKey) {
	t.Helper()
	jobs := newFarmJobs(t, url, toolchain)
	rdb, store := jobs.rdb, jobs.store
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	forged := filepath.Join(t.TempDir(), "forged")
	if err := os.WriteFile(forged, []byte("FORGED DEVICE IMAGE"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := farmBlobOf(t, forged, "o0")
	q := "offcc:farm:q:" + toolchain
	rdb.XGroupCreateMkStream(ctx, q, farm.Group, "0")
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			info, _ := json.Marshal(farm.WorkerInfo{Name: name, Host: "fake", Toolchain: toolchain, Slots: 4,
				Sandbox: []string{"bubblewrap"}, Key: "worker 0000000000000000", Seen: time.Now().UnixMilli(), Started: time.Now().UnixMilli()})
			rdb.HSet(ctx, "offcc:farm:workers", name, info)
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: farm.Group, Consumer: name, Streams: []string{q, ">"}, Count: 1, Block: 200 * time.Millisecond}).Result()
			if err != nil {
				continue
			}
			for _, s := range res {
				for _, m := range s.Messages {
					id, _ := m.Values["job"].(string)
					if ok, _ := rdb.SetNX(ctx, "offcc:farm:claim:"+id, name, 3*time.Second).Result(); !ok {
						continue
					}
					je, err := store.Get(cache.SumBytes([]byte("offcc farm job\x00" + id)))
					if err != nil {
						continue
					}
					// A result that looks right in every field it can.
					sum := cache.SumBytes(cache.EncodeIndex(je)).String()
					rec, _ := json.Marshal(farm.Result{Worker: name, Job: id, Toolchain: toolchain, JobSum: sum})
					e := &cache.Entry{Kind: "job-result", Record: rec, Blobs: []cache.Blob{b}}
					rk := cache.SumBytes([]byte("offcc farm result\x00" + id))
					if signer != nil {
						cache.SignEntry(signer, rk, e)
					}
					store.Replace(rk, e)
					rdb.RPush(ctx, "offcc:farm:done:"+id, name)
				}
			}
		}
	}()
}

// TestFarmFakeWorker: a fake worker that answers a real build's device
// jobs with forged device images (unsigned, or signed by a key the client
// does not trust) does not get them into the client's object: the build
// succeeds with the local build's object, warns once, and runs the jobs
// itself.
func TestFarmFakeWorker(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	toolchain := farm.Toolchain(filepath.Join(llvmBin, "clang"))
	for _, tc := range []struct {
		name   string
		signer *trust.PrivateKey
		why    string
	}{
		{"unsigned", nil, "unsigned"},
		{"signed-by-an-untrusted-key", farmKeys(t).key(t, "attacker"), "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := redistest.Start(t)
			fakeWorker(t, srv.URL, toolchain, "fake", tc.signer)
			waitWorkers(t, c, srv.URL, "fake")
			// HIP device compiles and AMDGPU device links: the jobs whose
			// images go into the object.
			a := args(farmHIPFlags(t, "gfx906,gfx90a"), "-c", srcPath(t, "../hip/kernels.hip"))
			b := newFarmBuild(t, c, srv.URL, nil, append(a, "-o", "k.o")...)
			r := b.mustRun(t, c)
			sameBytes(t, "the object built beside a fake worker", b.obj(), localObject(t, c, a...))
			if data := mustReadTB(t, b.obj()); bytes.Contains(data, []byte("FORGED DEVICE IMAGE")) {
				t.Errorf("the forged device image is in the object")
			}
			if remote := remoteLines(r.stderr); len(remote) != 0 {
				t.Errorf("jobs count as run on a worker: %q", remote)
			}
			if n := strings.Count(r.stderr, "offcc: warning: build farm"); n != 1 || !strings.Contains(r.stderr, tc.why) {
				t.Errorf("want one warning that names %q, got %d:\n%s", tc.why, n, r.stderr)
			}
		})
	}
}

// TestFarmInsecureIsExplicit: without keys a worker refuses to start, and
// a client runs everything locally with a warning; marked insecure, both
// work, and the worker's status says INSECURE.
func TestFarmInsecureIsExplicit(t *testing.T) {
	t.Parallel()
	c := offccOnly(t, "the build farm is offcc's")
	srv := redistest.Start(t)
	noKeys := []string{"OFFCC_SIGNING_KEY=", "OFFCC_TRUSTED_CLIENTS=", "OFFCC_TRUSTED_WORKERS="}

	r := cmdSpec{dir: workDir, env: append(farmEnv(t, ""), noKeys...), name: c.cc,
		args: []string{"worker", "--redis", srv.URL, "--jobs", "1", "--dir", workerDir(t)}}.run(t)
	if r.code != 1 || !strings.Contains(r.stderr, "offcc: error: worker: no signing key") || !strings.Contains(r.stderr, "--insecure-unsigned") {
		t.Errorf("a worker without keys: want exit 1 and an error naming --insecure-unsigned:\n%s", r)
	}

	a := args(farmHIPFlags(t, "gfx906"), "-c", srcPath(t, "../hip/kernels.hip"))
	want := localObject(t, c, a...)
	srv2 := redistest.Start(t)
	startInsecureWorker(t, c, srv2.URL, "insecure")
	st := waitWorkers(t, c, srv2.URL, "insecure")
	iw, _ := st.worker("insecure")
	if strings.Join(iw.Insecure, ",") != "unsigned" {
		t.Errorf("the insecure worker announces insecure %q, want [unsigned]", iw.Insecure)
	}
	text := cmdSpec{dir: workDir, env: farmEnv(t, ""), name: c.cc, args: []string{"worker", "status", "--redis", srv2.URL}}.mustRun(t)
	if !strings.Contains(text.stdout, "INSECURE (unsigned)") {
		t.Errorf("offcc worker status does not say INSECURE:\n%s", text.stdout)
	}

	// A client without keys: local, one warning.
	b := newFarmBuild(t, c, srv2.URL, noKeys, append(a, "-o", "k.o")...)
	r = b.mustRun(t, c)
	sameBytes(t, "the object of a client without keys", b.obj(), want)
	if !strings.Contains(r.stderr, "not marked insecure (OFFCC_REMOTE_EXEC_INSECURE=1)") || len(remoteLines(r.stderr)) != 0 {
		t.Errorf("a client without keys: want a warning and no job on a worker:\n%s", r.stderr)
	}
	// Marked insecure: the insecure worker runs its jobs.
	b = newFarmBuild(t, c, srv2.URL, append(noKeys, "OFFCC_REMOTE_EXEC_INSECURE=1"), append(a, "-o", "k.o")...)
	r = b.mustRun(t, c)
	sameBytes(t, "the object of an insecure client", b.obj(), want)
	if len(remoteLines(r.stderr)) == 0 {
		t.Errorf("an insecure client's jobs did not run on the insecure worker:\n%s", r.stderr)
	}
}

// startInsecureWorker starts a worker with --insecure-unsigned and no
// keys.
func startInsecureWorker(t *testing.T, c compiler, url, name string) *farmWorker {
	t.Helper()
	return startWorkerFlags(t, c, url, name, []string{"--insecure-unsigned"}, "OFFCC_SIGNING_KEY=", "OFFCC_TRUSTED_CLIENTS=")
}
