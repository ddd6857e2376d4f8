//go:build !linux

package cgrouptest

import "errors"

func create(limit int64) (*Group, error) {
	return nil, errors.New("memory cgroups are Linux-only")
}

func (g *Group) remove() error { return nil }
