// Package redisstore is a cache.Store kept in Redis, for sharing offcc's
// build cache between machines (like ccache's and sccache's Redis
// backends).
//
// Key layout, under a prefix (Options.KeyPrefix, "offcc:" by default):
//
//	<prefix>e:<key hex>      string: cache.EncodeIndex of the entry (kind,
//	                         record, blob list with sizes and SHA-256s,
//	                         the writer's signature; checksummed), zstd-
//	                         compressed when over 1 KiB and that makes it
//	                         smaller (cache.Codec.CompressIndex)
//	<prefix>b:<sha256 hex>   hash: one blob, shared by every entry that
//	                         holds those bytes (the SHA-256 is of the bytes
//	                         uncompressed). Stored as they are, field "m"
//	                         is "<size> <chunk size>"; compressed, field
//	                         "z" is "<size> <compressed size> <chunk
//	                         size>" instead. Fields "0", "1", ... hold the
//	                         bytes (or the zstd frames) in chunks of the
//	                         chunk size
//	<prefix>u:<sha256 hex>:<random>
//	                         hash: a blob being uploaded (expires after an
//	                         hour without progress)
//
// A blob is uploaded into its own temporary hash, one chunk (at most
// Options.ChunkSize bytes) per command, and renamed to its final name in a
// WATCHed transaction once every chunk is there, so a blob's key exists
// only when the blob is complete: EXISTS on it is the "already uploaded"
// test, and an evicted blob disappears whole. Entries are written after
// their blobs. Blobs are zstd-compressed at Options.Compression's level
// (cache.Codec) unless that does not make them smaller; each blob's
// metadata field says which, so writers with different levels share a
// server (an offcc from before compression finds no "m" in a compressed
// blob: a miss, which it leaves alone). Readers decompress within bounds
// (no window beyond what the blob's size needs, no more compressed bytes
// than its size allows) and verify every blob's size and SHA-256
// (cache.NewVerifier), so bytes changed in Redis, a frame that does not
// decode or decodes to other bytes, are detected: a miss. The store
// itself trusts whoever can write to the server: cache.Layered checks each
// entry's signature (cache.VerifyEntry), so that an entry changed, moved
// to another key or written without a trusted key is a miss.
//
// Remove deletes only the entry's key: blobs are shared and stay until
// Redis evicts them (run the server with maxmemory and allkeys-lru, as
// ccache advises). An entry whose blob has been evicted reads as a miss
// (OpenBlob's error wraps cache.ErrNotFound).
//
// Every command runs under a deadline of Options.OpTimeout (dialling under
// Options.DialTimeout) and is not retried; errors are returned for the
// caller to fall back on a local store; their messages leave the server
// out, for the caller to name it as the user knows it ("shared cache
// redis://host:6379: cannot connect: connection refused"). Open silences go-redis' own
// logger, which is process-wide, so that a dead server does not print on
// every compile.
//
// The client is github.com/redis/go-redis/v9 rather than rueidis: its typed
// Streams API (XReadGroup, XAutoClaim including the deleted IDs of Redis
// 7.0) serves the build farm's work queue; it does not auto-pipeline, so a
// large chunk does not block the small commands queued behind it (rueidis'
// head-of-line blocking); and deadlines come per command from a context.
package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/offcc/offcc/cache"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Options tunes a Store; zero fields take their defaults.
type Options struct {
	// KeyPrefix starts every key the store uses (default "offcc:").
	KeyPrefix string
	// DialTimeout bounds connecting to the server (default 250ms).
	DialTimeout time.Duration
	// OpTimeout bounds each command (default 2s).
	OpTimeout time.Duration
	// ChunkSize is the most blob bytes one command moves (default 1 MiB).
	ChunkSize int
	// MaxBlob is the largest blob the store accepts (default 512 MiB).
	MaxBlob int64
	// MaxIndex is the largest entry index (kind, record, blob list) the
	// store reads or writes (default 16 MiB): a larger one in the server
	// reads as a miss, without being loaded whole.
	MaxIndex int
	// Compression is how blobs are uploaded (the zero value: zstd level
	// 1, as the local cache). Blobs are read however they were written.
	Compression cache.Compression
}

// Store is a cache.Store in a Redis server; see the package comment. It is
// safe for concurrent use.
type Store struct {
	c        *redis.Client
	opt      Options
	name     string // the URL without its password, for messages
	up, down atomic.Int64
	// wireUp and wireDown count the blob bytes as sent and received
	// (compressed or not).
	wireUp, wireDown atomic.Int64
	codec            cache.Codec
}

var _ cache.Store = (*Store)(nil)

const (
	metaField  = "m" // a blob stored as it is
	zstdField  = "z" // a blob stored compressed
	stagingTTL = time.Hour
)

// Open returns the store at rawURL, redis://[user:password@]host[:port][/db]
// or rediss://... (TLS). It does not connect: the first command (or Ping)
// does.
func Open(rawURL string, opt Options) (*Store, error) {
	bad := func(why string) error {
		return fmt.Errorf("bad Redis URL %s: %s (want redis://[user:password@]host:port[/db] or rediss://...)", redact(rawURL), why)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, bad("does not parse")
	}
	switch {
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return nil, bad(fmt.Sprintf("scheme %q", u.Scheme))
	case u.Opaque != "" || u.Hostname() == "":
		return nil, bad("no host")
	case u.RawQuery != "" || u.Fragment != "":
		return nil, bad("query or fragment")
	}
	ro, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, bad(strings.TrimPrefix(err.Error(), "redis: "))
	}
	if opt.KeyPrefix == "" {
		opt.KeyPrefix = "offcc:"
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 250 * time.Millisecond
	}
	if opt.OpTimeout <= 0 {
		opt.OpTimeout = 2 * time.Second
	}
	if opt.ChunkSize <= 0 {
		opt.ChunkSize = 1 << 20
	}
	if opt.MaxBlob <= 0 {
		opt.MaxBlob = 512 << 20
	}
	if opt.MaxIndex <= 0 {
		opt.MaxIndex = 16 << 20
	}
	ro.DialTimeout = opt.DialTimeout
	ro.DialerRetries = 1 // one attempt
	ro.ReadTimeout = opt.OpTimeout
	ro.WriteTimeout = opt.OpTimeout
	ro.PoolTimeout = opt.OpTimeout
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = -1
	ro.DisableIdentity = true // CLIENT SETINFO is Redis 7.2+
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	return &Store{c: redis.NewClient(ro), opt: opt, name: u.Redacted()}, nil
}

var quietOnce sync.Once

// quiet is a go-redis logger that prints nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Redact returns a Redis URL with its password hidden, for messages.
func Redact(s string) string { return redact(s) }

// redact hides a password in a URL that may not parse.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			return s[:i+3] + "xxxxx" + s[at:]
		}
		return "xxxxx" + s[at:]
	}
	return s
}

// Close closes the store's connections.
func (s *Store) Close() error { return s.c.Close() }

// Ping checks that the server answers, within ctx and OpTimeout.
func (s *Store) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opt.OpTimeout)
	defer cancel()
	return s.err("PING", s.c.Ping(ctx).Err())
}

// Client returns the store's Redis client, for other users of the same
// server (the build farm's queue).
func (s *Store) Client() *redis.Client { return s.c }

// Prefix returns the prefix of every key the store uses.
func (s *Store) Prefix() string { return s.opt.KeyPrefix }

// Name returns the server's URL without its password.
func (s *Store) Name() string { return s.name }

// Transferred returns the blob bytes uploaded and downloaded so far,
// uncompressed (what the blobs hold).
func (s *Store) Transferred() (up, down int64) { return s.up.Load(), s.down.Load() }

// WireTransferred returns the blob bytes uploaded and downloaded so far as
// they travelled, compressed or not.
func (s *Store) WireTransferred() (up, down int64) { return s.wireUp.Load(), s.wireDown.Load() }

func (s *Store) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.opt.OpTimeout)
}

func (s *Store) err(op string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, err: err}
}

// opError is a failed Redis command. Its message leaves the server out:
// whoever reports it names the server as the user knows it ("shared cache
// redis://host:6379", "build farm redis://host:6379"). A server that
// cannot be reached is said so, whatever the command.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string {
	why, ok := netCause(e.err)
	switch {
	case ok && strings.HasPrefix(why, "cannot connect: "):
		return why
	case ok:
		return e.op + ": " + why
	}
	return e.op + ": " + e.err.Error()
}

// Describe spells an error of a command on a store's server (the Store's
// own, or one of go-redis run on its Client, as the build farm's are)
// without the server's address or Go's and go-redis' prefixes: "cannot
// connect: connection refused", "connection lost: connection reset by
// peer", "no answer (timed out)". Whoever reports it names the server as
// the user knows it (Name).
func Describe(err error) string {
	if err == nil {
		return ""
	}
	var oe *opError
	if errors.As(err, &oe) {
		return oe.Error()
	}
	if why, ok := netCause(err); ok {
		return why
	}
	return strings.TrimPrefix(err.Error(), "redis: ")
}

// netCause spells a network error of a command: a server that cannot be
// reached, a connection that broke or a command that timed out; ok is
// false for any other error (one the server answered with).
func netCause(err error) (why string, ok bool) {
	var oe *net.OpError
	switch {
	case errors.As(err, &oe) && oe.Op == "dial":
		return "cannot connect: " + causeOf(oe), true
	case errors.As(err, &oe):
		return "connection lost: " + causeOf(oe), true
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return "no answer (timed out)", true
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection lost: closed by the server", true
	}
	return "", false
}

// Unwrap returns the underlying error.
func (e *opError) Unwrap() error { return e.err }

// causeOf spells a network error's cause without Go's "dial tcp ADDR:"
// prefix: "connection refused", "i/o timeout".
func causeOf(oe *net.OpError) string {
	if oe.Timeout() {
		return "no answer (timed out)"
	}
	err := oe.Err
	var se *os.SyscallError
	if errors.As(err, &se) {
		err = se.Err
	}
	return err.Error()
}

func (s *Store) entryKey(key cache.Sum) string { return s.opt.KeyPrefix + "e:" + key.String() }
func (s *Store) blobKey(sum cache.Sum) string  { return s.opt.KeyPrefix + "b:" + sum.String() }

// Get returns key's entry, or cache.ErrNotFound when there is none or it
// does not decode. Its blobs have Path ""; read them with OpenBlob. Used is
// the time of the Get (Redis keeps its own LRU clock).
func (s *Store) Get(key cache.Sum) (*cache.Entry, error) {
	return s.GetWithin(key, s.opt.MaxIndex)
}

// GetWithin is Get of an entry whose index, decompressed, is at most max
// bytes (and at most Options.MaxIndex); a larger one is
// cache.ErrNotFound, found without decoding it. A farm worker bounds a
// job's entry by the inputs it takes: a compressed index of a few MB can
// hold a list that costs ten times its size to decode.
func (s *Store) GetWithin(key cache.Sum, max int) (*cache.Entry, error) {
	max = min(max, s.opt.MaxIndex)
	ctx, cancel := s.ctx()
	defer cancel()
	// At most one byte more than an index may have: whoever can write
	// to the server must not make a reader load a huge string.
	data, err := s.c.GetRange(ctx, s.entryKey(key), 0, int64(max)).Bytes()
	if errors.Is(err, redis.Nil) || (err == nil && len(data) == 0) {
		return nil, cache.ErrNotFound
	}
	if err != nil {
		return nil, s.err("GET entry", err)
	}
	if len(data) > max {
		return nil, cache.ErrNotFound
	}
	if data, err = s.codec.ExpandIndex(data, int64(max)); err != nil {
		return nil, cache.ErrNotFound
	}
	e, err := cache.DecodeIndex(data)
	if err != nil {
		return nil, cache.ErrNotFound
	}
	e.Used = time.Now()
	return e, nil
}

// Put uploads e's blobs that the server lacks (reading each from its Path
// and checking its size and digest) and then stores e under key, unless a
// sound entry is there already.
func (s *Store) Put(key cache.Sum, e *cache.Entry) error {
	if _, err := s.Get(key); err != cache.ErrNotFound {
		return err // nil: kept
	}
	_, err := s.put(key, e, false)
	return err
}

// Replace is Put replacing any entry stored under key.
func (s *Store) Replace(key cache.Sum, e *cache.Entry) error {
	_, err := s.put(key, e, true)
	return err
}

// ReplaceCounted is Replace that also returns the blob bytes it uploaded
// (those the server lacked), uncompressed.
func (s *Store) ReplaceCounted(key cache.Sum, e *cache.Entry) (int64, error) {
	return s.put(key, e, true)
}

func (s *Store) put(key cache.Sum, e *cache.Entry, replace bool) (uploaded int64, err error) {
	stored := *e
	stored.Blobs = append([]cache.Blob(nil), e.Blobs...)
	for i := range stored.Blobs {
		stored.Blobs[i].Path = ""
	}
	index := cache.EncodeIndex(&stored)
	if len(index) > s.opt.MaxIndex {
		return 0, fmt.Errorf("entry index of %d bytes, more than %d", len(index), s.opt.MaxIndex)
	}
	if _, err := cache.DecodeIndex(index); err != nil {
		return 0, fmt.Errorf("entry %s: %v", key, err) // bad blob names
	}
	index = s.codec.CompressIndex(index, s.opt.Compression)
	present, err := s.present(e.Blobs)
	if err != nil {
		return 0, err
	}
	for i, b := range e.Blobs {
		if present[i] {
			continue
		}
		n, err := s.upload(b)
		uploaded += n
		if err != nil {
			return uploaded, err
		}
	}
	ctx, cancel := s.ctx()
	defer cancel()
	k := s.entryKey(key)
	if replace {
		return uploaded, s.err("SET entry", s.c.Set(ctx, k, index, 0).Err())
	}
	ok, err := s.c.SetNX(ctx, k, index, 0).Result()
	if err != nil || ok {
		return uploaded, s.err("SET NX entry", err)
	}
	// Something is there: keep it if sound, else overwrite it.
	if _, err := s.Get(key); err != cache.ErrNotFound {
		return uploaded, err
	}
	return uploaded, s.err("SET entry", s.c.Set(ctx, k, index, 0).Err())
}

// present reports which blobs the server has, in one round trip (an
// entry of a farm job names hundreds of headers).
func (s *Store) present(blobs []cache.Blob) ([]bool, error) {
	if len(blobs) == 0 {
		return nil, nil
	}
	ctx, cancel := s.ctx()
	defer cancel()
	cmds := make([]*redis.IntCmd, len(blobs))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, b := range blobs {
			cmds[i] = p.Exists(ctx, s.blobKey(b.Sum))
		}
		return nil
	})
	if err != nil {
		return nil, s.err("EXISTS blobs", err)
	}
	out := make([]bool, len(blobs))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
}

// upload stores b's bytes unless its blob key exists: compressed (see
// Options.Compression), in chunks, under a temporary key renamed into
// place once whole. It returns the blob bytes uploaded, uncompressed.
func (s *Store) upload(b cache.Blob) (sent int64, err error) {
	if b.Size > s.opt.MaxBlob {
		return 0, fmt.Errorf("blob %s: %d bytes, over the limit of %d", b.Name, b.Size, s.opt.MaxBlob)
	}
	final := s.blobKey(b.Sum)
	ctx, cancel := s.ctx()
	n, err := s.c.Exists(ctx, final).Result()
	cancel()
	if err != nil || n > 0 {
		return 0, s.err("EXISTS blob", err)
	}
	f, err := os.Open(b.Path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := s.opt.KeyPrefix + "u:" + b.Sum.String() + ":" + hex.EncodeToString(rnd[:])
	ok := false
	defer func() {
		if !ok {
			ctx, cancel := s.ctx()
			s.c.Unlink(ctx, tmp) // best effort; it expires anyway
			cancel()
		}
	}()
	cs := s.opt.ChunkSize
	chunk := make([]byte, 0, cs)
	chunks := 0
	flush := func() error {
		if err := s.hsetExpire(tmp, strconv.Itoa(chunks), chunk); err != nil {
			return err
		}
		s.wireUp.Add(int64(len(chunk)))
		chunks++
		chunk = chunk[:0]
		return nil
	}
	// The bytes are verified as they are read: a file changed since it
	// was hashed is not uploaded under the old digest.
	compressed, stored, err := s.codec.Encode(cache.NewVerifier(f, b), b.Size, s.opt.Compression, func(p []byte) error {
		for len(p) > 0 {
			m := min(len(p), cs-len(chunk))
			chunk = append(chunk, p[:m]...)
			p = p[m:]
			if len(chunk) == cs {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil && len(chunk) > 0 {
		err = flush()
	}
	if err != nil {
		var oe *opError
		if errors.As(err, &oe) {
			return 0, err
		}
		return 0, fmt.Errorf("blob %s (%s): %w", b.Name, b.Path, err)
	}
	field, meta := metaField, strconv.FormatInt(b.Size, 10)+" "+strconv.Itoa(cs)
	if compressed {
		field, meta = zstdField, strconv.FormatInt(b.Size, 10)+" "+strconv.FormatInt(stored, 10)+" "+strconv.Itoa(cs)
	}
	if err := s.hsetExpire(tmp, field, []byte(meta)); err != nil {
		return 0, err
	}
	// Publish: rename only a hash holding every chunk (it could have
	// expired or been evicted, and been recreated by a later HSET).
	ctx, cancel = s.ctx()
	defer cancel()
	err = s.c.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.HLen(ctx, tmp).Result()
		if err != nil {
			return err
		}
		if n != int64(chunks)+1 {
			return fmt.Errorf("upload lost chunks (%d of %d fields)", n, chunks+1)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Rename(ctx, tmp, final)
			p.Persist(ctx, final)
			return nil
		})
		return err
	}, tmp)
	if err != nil {
		return 0, s.err("publish blob "+b.Sum.String(), err)
	}
	ok = true
	s.up.Add(b.Size)
	return b.Size, nil
}

// hsetExpire sets a field of an upload's hash and renews its expiry, in
// one round trip.
func (s *Store) hsetExpire(key, field string, value []byte) error {
	ctx, cancel := s.ctx()
	defer cancel()
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, field, value)
		p.Expire(ctx, key, stagingTTL)
		return nil
	})
	return s.err("HSET upload", err)
}

// OpenBlob returns a reader of b's bytes, fetched one chunk at a time and
// decompressed if the blob was stored compressed. The reader fails with
// cache.ErrCorrupt at the end if the bytes are not b's (or as soon as
// there are more, or when a compressed blob does not decode), and with an
// error if a chunk is missing. A blob not in the store is an error
// wrapping cache.ErrNotFound.
func (s *Store) OpenBlob(b cache.Blob) (io.ReadCloser, error) {
	if b.Size > s.opt.MaxBlob {
		return nil, fmt.Errorf("blob %s: %d bytes, over the limit of %d", b.Name, b.Size, s.opt.MaxBlob)
	}
	key := s.blobKey(b.Sum)
	ctx, cancel := s.ctx()
	vals, err := s.c.HMGet(ctx, key, metaField, zstdField).Result()
	cancel()
	if err != nil {
		return nil, s.err("HGET blob", err)
	}
	raw, rawOK := vals[0].(string)
	comp, compOK := vals[1].(string)
	if !rawOK && !compOK {
		return nil, fmt.Errorf("blob %s: %w", b.Sum, cache.ErrNotFound)
	}
	m, err := parseMeta(raw, rawOK, comp, compOK)
	if err == nil && m.size != b.Size {
		err = fmt.Errorf("size %d, not %d", m.size, b.Size)
	}
	if err == nil && m.compressed && m.stored > cache.MaxStoredSize(b.Size) {
		err = fmt.Errorf("%d bytes compressed, more than a blob of %d bytes takes", m.stored, b.Size)
	}
	if err != nil {
		s.removeBlob(key)
		return nil, fmt.Errorf("blob %s: bad metadata: %v: %w", b.Sum, err, cache.ErrCorrupt)
	}
	if !m.compressed {
		r := &chunkReader{s: s, key: key, cs: int(m.chunk), n: int((m.size + m.chunk - 1) / m.chunk)}
		return &healingReader{cache.NewVerifier(r, b), s, key}, nil
	}
	r := &chunkReader{s: s, key: key, cs: int(m.chunk), n: int((m.stored + m.chunk - 1) / m.chunk), stored: m.stored}
	dr, err := s.codec.NewReader(r, b.Size)
	if err != nil {
		s.removeBlob(key)
		return nil, err
	}
	v := cache.NewVerifier(dr, b)
	return &healingReader{v, s, key}, nil
}

// blobMeta is a blob's metadata field: its size, and how it is stored.
type blobMeta struct {
	compressed bool
	size       int64 // bytes uncompressed
	stored     int64 // bytes compressed, when compressed
	chunk      int64 // chunk size
}

// parseMeta reads a blob's metadata: the "m" field (raw, when rawOK) or
// the "z" field (comp, when compOK), never both.
func parseMeta(raw string, rawOK bool, comp string, compOK bool) (blobMeta, error) {
	var m blobMeta
	var fields []string
	switch {
	case rawOK && compOK:
		return m, errors.New("stored both as it is and compressed")
	case rawOK:
		fields = strings.Split(raw, " ")
		if len(fields) != 2 {
			return m, fmt.Errorf("%.40q is not two numbers", raw)
		}
		fields = []string{fields[0], fields[0], fields[1]}
	default:
		m.compressed = true
		fields = strings.Split(comp, " ")
		if len(fields) != 3 {
			return m, fmt.Errorf("%.40q is not three numbers", comp)
		}
	}
	var nums [3]int64
	for i, f := range fields {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 {
			return m, fmt.Errorf("%.40q is not a number", f)
		}
		nums[i] = n
	}
	m.size, m.stored, m.chunk = nums[0], nums[1], nums[2]
	if m.chunk <= 0 || m.chunk > math.MaxInt32 {
		return m, fmt.Errorf("chunk size %d", m.chunk)
	}
	if m.compressed && m.stored == 0 {
		return m, errors.New("no compressed bytes")
	}
	if !m.compressed {
		m.stored = 0
	}
	return m, nil
}

// removeBlob deletes a blob whose bytes failed verification (tampered or
// damaged in Redis), so that the next Put uploads it again: Put skips
// blobs that exist, so a bad one would otherwise stay.
func (s *Store) removeBlob(key string) {
	ctx, cancel := s.ctx()
	defer cancel()
	s.c.Del(ctx, key)
}

// healingReader is a blob's verified reader that removes the blob when
// its bytes turn out not to be the blob's.
type healingReader struct {
	*cache.Verifier
	s   *Store
	key string
}

func (r *healingReader) Read(p []byte) (int, error) {
	n, err := r.Verifier.Read(p)
	r.s.down.Add(int64(n))
	if errors.Is(err, cache.ErrCorrupt) && r.key != "" {
		r.s.removeBlob(r.key)
		r.key = ""
	}
	return n, err
}

// chunkReader reads a blob's chunks in turn.
type chunkReader struct {
	s     *Store
	key   string
	cs    int
	n, i  int // chunks, next chunk
	chunk []byte
	// stored, for a compressed blob, is its compressed size: the chunks
	// but the last have cs bytes, and the last the rest.
	stored int64
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.chunk) == 0 {
		if r.i >= r.n {
			return 0, io.EOF
		}
		ctx, cancel := r.s.ctx()
		data, err := r.s.c.HGet(ctx, r.key, strconv.Itoa(r.i)).Bytes()
		cancel()
		if errors.Is(err, redis.Nil) {
			return 0, fmt.Errorf("%s: chunk %d of %d is missing", r.key, r.i, r.n)
		}
		if err != nil {
			return 0, r.s.err("HGET chunk", err)
		}
		want := len(data)
		if r.stored > 0 {
			want = r.cs
			if r.i == r.n-1 {
				want = int(r.stored - int64(r.cs)*int64(r.n-1))
			}
		}
		if len(data) > r.cs || len(data) == 0 || len(data) != want {
			return 0, fmt.Errorf("%s: chunk %d has %d bytes: %w", r.key, r.i, len(data), cache.ErrCorrupt)
		}
		r.s.wireDown.Add(int64(len(data)))
		r.chunk = data
		r.i++
	}
	n := copy(p, r.chunk)
	r.chunk = r.chunk[n:]
	return n, nil
}

func (r *chunkReader) Close() error {
	r.chunk, r.i = nil, r.n
	return nil
}

// Remove deletes key's entry. Its blobs stay (other entries may share
// them) until Redis evicts them.
func (s *Store) Remove(key cache.Sum) error {
	ctx, cancel := s.ctx()
	defer cancel()
	return s.err("DEL entry", s.c.Del(ctx, s.entryKey(key)).Err())
}

// Walk calls fn once for every entry that decodes, found by SCAN (entries
// stored or removed during the walk may or may not be seen). An error from
// fn stops the walk and is returned. The entries' Used is zero.
func (s *Store) Walk(fn func(key cache.Sum, e *cache.Entry) error) error {
	prefix := s.opt.KeyPrefix + "e:"
	pattern := globEscape(prefix) + "*"
	seen := map[cache.Sum]bool{}
	var cursor uint64
	for {
		ctx, cancel := s.ctx()
		keys, next, err := s.c.Scan(ctx, cursor, pattern, 200).Result()
		var vals []any
		if err == nil && len(keys) > 0 {
			vals, err = s.c.MGet(ctx, keys...).Result()
		}
		cancel()
		if err != nil {
			return s.err("SCAN entries", err)
		}
		for i, k := range keys {
			key, err := cache.ParseSum(strings.TrimPrefix(k, prefix))
			text, ok := vals[i].(string)
			if err != nil || !ok || seen[key] {
				continue
			}
			seen[key] = true
			data, err := s.codec.ExpandIndex([]byte(text), int64(s.opt.MaxIndex))
			if err != nil {
				continue
			}
			e, err := cache.DecodeIndex(data)
			if err != nil {
				continue
			}
			if err := fn(key, e); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// globEscape quotes the characters special to SCAN's MATCH.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
