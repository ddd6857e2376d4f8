package trust

import (
	"fmt"
	"strings"
)

// Settings are the keys of one offcc process: the key it signs with and
// the keys it trusts, by role. Roles are kept apart so that a key trusted
// for one kind of record (a developer's, to send jobs) is never believed
// for another (a cache entry every developer's build restores).
type Settings struct {
	// SigningKey signs what this process writes (OFFCC_SIGNING_KEY):
	// a client's jobs, a worker's results, a cache writer's entries.
	SigningKey *PrivateKey
	// Workers are the keys whose job results a client believes
	// (OFFCC_TRUSTED_WORKERS).
	Workers *Keyring
	// Clients are the keys whose jobs a worker runs
	// (OFFCC_TRUSTED_CLIENTS).
	Clients *Keyring
	// CacheWriters are the keys whose shared-cache entries are hits and
	// whose archives import (OFFCC_TRUSTED_CACHE_KEYS).
	CacheWriters *Keyring
}

// The environment variables of Settings.
const (
	EnvSigningKey   = "OFFCC_SIGNING_KEY"
	EnvWorkers      = "OFFCC_TRUSTED_WORKERS"
	EnvClients      = "OFFCC_TRUSTED_CLIENTS"
	EnvCacheWriters = "OFFCC_TRUSTED_CACHE_KEYS"
)

// FromEnv reads Settings from the environment. Unset variables leave
// their field empty (nil key, empty keyring); a variable naming a file
// that cannot be read or is not a key is an error naming the variable.
func FromEnv(getenv func(string) string) (*Settings, error) {
	s := &Settings{}
	if p := strings.TrimSpace(getenv(EnvSigningKey)); p != "" {
		k, err := LoadPrivateKey(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", EnvSigningKey, err)
		}
		s.SigningKey = k
	}
	for _, v := range []struct {
		env string
		dst **Keyring
	}{{EnvWorkers, &s.Workers}, {EnvClients, &s.Clients}, {EnvCacheWriters, &s.CacheWriters}} {
		r, err := LoadKeyring(getenv(v.env))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", v.env, err)
		}
		*v.dst = r
	}
	return s, nil
}
