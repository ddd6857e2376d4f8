package actions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// slotsJobserver returns a make -jN jobserver (N-1 tokens in a pipe) and
// a client of it, closed at the end of the test.
func slotsJobserver(t *testing.T, n int) (*server, *Jobserver) {
	t.Helper()
	srv := newPipeServer(t, n)
	js, err := JobserverFromEnv(srv.makeflags)
	if err != nil || js == nil {
		t.Fatalf("JobserverFromEnv(%q) = %v, %v", srv.makeflags, js, err)
	}
	t.Cleanup(func() { js.Close() })
	return srv, js
}

// mustLocal acquires a local slot that must be free now.
func mustLocal(t *testing.T, s *slots) slot {
	t.Helper()
	sl, ok := s.acquireLocal(context.Background())
	if !ok {
		t.Fatal("no local slot free")
	}
	return sl
}

// noLocal checks that no local slot is free now, and whether a token
// read is under way.
func noLocal(t *testing.T, s *slots, reading bool) {
	t.Helper()
	if sl, ok := s.acquireLocal(context.Background()); ok {
		t.Fatalf("got local slot %+v, want none free", sl)
	}
	if got := s.tokenReady() != nil; got != reading {
		t.Fatalf("token read under way: %v, want %v", got, reading)
	}
}

// arrival waits for the outcome of the token read under way.
func arrival(t *testing.T, s *slots) error {
	t.Helper()
	select {
	case err := <-s.tokenReady():
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no token arrived")
		return nil
	}
}

// noArrival checks that the token read under way gets nothing for a while.
func noArrival(t *testing.T, s *slots) {
	t.Helper()
	select {
	case err := <-s.tokenReady():
		t.Fatalf("token read ended (%v), want it waiting", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestSlotsWithoutJobserver(t *testing.T) {
	s := newSlots(3, nil, nil)
	for want := range 3 {
		if sl := mustLocal(t, s); sl.index != want || sl.kind != plainSlot {
			t.Fatalf("slot %+v, want plain slot %d", sl, want)
		}
	}
	noLocal(t, s, false)
	s.releaseLocal(slot{index: 1, kind: plainSlot})
	if sl := mustLocal(t, s); sl.index != 1 {
		t.Fatalf("slot %d, want the freed slot 1", sl.index)
	}
	for i := range 3 {
		s.releaseLocal(slot{index: i, kind: plainSlot})
	}
	if !s.idle() {
		t.Fatal("not idle with every slot released")
	}
	if s.acquireRemote() {
		t.Fatal("a remote slot without a Remote")
	}
	s.close()
}

// TestSlotsJobserverTokens: the first slot is the implicit one, every
// other one a token read in the background, no more than jobs at once;
// every token goes back.
func TestSlotsJobserverTokens(t *testing.T) {
	srv, js := slotsJobserver(t, 3) // two tokens
	s := newSlots(4, js, nil)
	implicit := mustLocal(t, s)
	if implicit.kind != implicitSlot || implicit.index != 0 {
		t.Fatalf("first slot %+v, want the implicit slot 0", implicit)
	}
	var held []slot
	for i := 1; i <= 2; i++ {
		noLocal(t, s, true)
		sl, ok := s.tokenArrived(arrival(t, s), true)
		if !ok || sl.kind != tokenSlot || sl.index != i {
			t.Fatalf("token %d: slot %+v, %v; want token slot %d", i, sl, ok, i)
		}
		held = append(held, sl)
	}
	// make's tokens are all taken: the next read waits.
	noLocal(t, s, true)
	noArrival(t, s)
	// A token given back goes to the waiting read.
	s.releaseLocal(held[0])
	sl, ok := s.tokenArrived(arrival(t, s), true)
	if !ok || sl.kind != tokenSlot || sl.index != 1 {
		t.Fatalf("slot %+v, %v; want token slot 1 again", sl, ok)
	}
	held[0] = sl
	// The implicit slot comes free while a read waits: the token it gets
	// goes back, and the implicit slot is used.
	noLocal(t, s, true)
	s.releaseLocal(implicit)
	s.releaseLocal(held[1])
	sl, ok = s.tokenArrived(arrival(t, s), true)
	if !ok || sl.kind != implicitSlot {
		t.Fatalf("slot %+v, %v; want the implicit slot", sl, ok)
	}
	s.releaseLocal(sl)
	s.releaseLocal(held[0])
	if !s.idle() {
		t.Fatal("not idle with every slot released")
	}
	s.close()
	srv.check(t)
}

// TestSlotsJobsLimit: with a jobserver and jobs 1, the implicit slot is the
// only one, and no token is read.
func TestSlotsJobsLimit(t *testing.T) {
	srv, js := slotsJobserver(t, 4)
	s := newSlots(1, js, nil)
	sl := mustLocal(t, s)
	noLocal(t, s, false)
	s.releaseLocal(sl)
	s.close()
	srv.check(t)
}

// TestSlotsTokenNotWanted: a token nobody waits for any more goes back.
func TestSlotsTokenNotWanted(t *testing.T) {
	srv, js := slotsJobserver(t, 2)
	s := newSlots(2, js, nil)
	implicit := mustLocal(t, s)
	noLocal(t, s, true)
	if sl, ok := s.tokenArrived(arrival(t, s), false); ok {
		t.Fatalf("got slot %+v nobody wanted", sl)
	}
	s.releaseLocal(implicit)
	if !s.idle() {
		t.Fatal("not idle")
	}
	s.close()
	srv.check(t)
}

// TestSlotsStopAcquiring: a read nobody needs is cancelled, which does not
// break the jobserver: the next slot is read again.
func TestSlotsStopAcquiring(t *testing.T) {
	srv, js := slotsJobserver(t, 1) // no tokens: reads wait
	s := newSlots(2, js, nil)
	implicit := mustLocal(t, s)
	noLocal(t, s, true)
	s.stopAcquiring(true)
	noArrival(t, s) // still wanted: still reading
	s.stopAcquiring(false)
	err := arrival(t, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v, want context.Canceled", err)
	}
	if _, ok := s.tokenArrived(err, true); ok {
		t.Fatal("a cancelled read gave a slot")
	}
	noLocal(t, s, true) // not broken: reading again
	s.releaseLocal(implicit)
	s.close()
	if !s.idle() {
		t.Fatal("not idle after close")
	}
	srv.check(t)
}

// TestSlotsBrokenJobserver: a jobserver whose read fails is given up, and
// the implicit slot goes on.
func TestSlotsBrokenJobserver(t *testing.T) {
	_, js := slotsJobserver(t, 3)
	js.Close()
	s := newSlots(4, js, nil)
	implicit := mustLocal(t, s)
	noLocal(t, s, true)
	err := arrival(t, s)
	if err == nil {
		t.Fatal("read from a closed jobserver succeeded")
	}
	if _, ok := s.tokenArrived(err, true); ok {
		t.Fatal("a failed read gave a slot")
	}
	noLocal(t, s, false) // given up
	s.releaseLocal(implicit)
	if sl := mustLocal(t, s); sl.kind != implicitSlot {
		t.Fatalf("slot %+v, want the implicit slot", sl)
	}
}

// TestSlotsCloseGivesBackPendingToken: close ends a read under way, and
// its token, if it got one, goes back.
func TestSlotsCloseGivesBackPendingToken(t *testing.T) {
	for _, wait := range []time.Duration{0, 50 * time.Millisecond} {
		srv, js := slotsJobserver(t, 2)
		s := newSlots(2, js, nil)
		implicit := mustLocal(t, s)
		noLocal(t, s, true)
		time.Sleep(wait) // let the read take the token, or not
		s.releaseLocal(implicit)
		s.close()
		if !s.idle() {
			t.Fatal("not idle after close")
		}
		srv.check(t)
	}
}

func TestSlotsRemote(t *testing.T) {
	r := &fakeRemote{slots: 2}
	s := newSlots(1, nil, r)
	if !s.acquireRemote() || !s.acquireRemote() {
		t.Fatal("Remote's two slots not free")
	}
	if s.acquireRemote() {
		t.Fatal("a third remote slot")
	}
	if r.asked == 0 {
		t.Fatal("Remote.Slots not asked")
	}
	// Local slots are apart from remote ones.
	sl := mustLocal(t, s)
	s.releaseRemote()
	if s.idle() {
		t.Fatal("idle with slots taken")
	}
	if !s.acquireRemote() {
		t.Fatal("a released remote slot not free again")
	}
	r.slots = 1 // Remote shrinks: no slot until the running ones end
	s.releaseRemote()
	if s.acquireRemote() {
		t.Fatal("a remote slot beyond Remote's Slots")
	}
	s.releaseRemote()
	s.releaseLocal(sl)
	if !s.idle() {
		t.Fatal("not idle with every slot released")
	}
}
