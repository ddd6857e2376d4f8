// Package membudget measures the memory offcc may use (its cgroup's limit
// less what others in the cgroup use, MemAvailable, an explicit setting),
// samples what running processes use, counts the cgroup's OOM kills, and
// shares one budget between the offcc processes of a cgroup through a
// small ledger file under a lock.
package membudget
