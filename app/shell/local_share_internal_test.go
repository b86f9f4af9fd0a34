package shell

import (
	"testing"

	"github.com/google/uuid"
)

// A process's local slots are shared fairly: a tenant alone may take them
// all, but once others hold slots no tenant gets more than the slots
// divided among the tenants holding any; a step refused a slot goes
// through River. A freed slot goes to whoever asks next within its share.
func TestLocalSlotsAreSharedFairly(t *testing.T) {
	l := &localSteps{slots: 8, byTenant: map[uuid.UUID]int{}}
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	took := func(tenant uuid.UUID, n int) int {
		got := 0
		for range n {
			if l.reserve(tenant) {
				got++
			}
		}
		return got
	}
	if n := took(a, 6); n != 6 {
		t.Fatalf("a tenant alone took %d of 6 asked, want 6", n)
	}
	// b arrives: two holders, a share of 4; a is past it, b may take the
	// two slots left.
	if n := took(b, 4); n != 2 {
		t.Errorf("b took %d, want the 2 slots left", n)
	}
	if took(a, 1) != 0 {
		t.Error("a took a slot past every slot in use")
	}
	for range 3 {
		l.free(a)
	}
	// Now a holds 3 and b 2 of 8: a may go back up to its share of 4, no
	// further, while b may take its share.
	if n := took(a, 3); n != 1 {
		t.Errorf("a took %d more, want 1 (up to its share of 4)", n)
	}
	if n := took(b, 3); n != 2 {
		t.Errorf("b took %d more, want 2 (up to its share of 4)", n)
	}
	// c arrives with every slot taken: it waits in River.
	if took(c, 1) != 0 {
		t.Error("c took a slot when all 8 were in use")
	}
	for range 4 {
		l.free(b)
	}
	// Three tenants could hold slots now, but b holds none: a (4) and c
	// share 8, 4 each.
	if n := took(c, 8); n != 4 {
		t.Errorf("c took %d, want its share of 4", n)
	}
	if l.running() != 8 {
		t.Errorf("%d slots in use, want 8", l.running())
	}
}
