package engine

import (
	"testing"

	"github.com/google/uuid"
)

func TestDerivedIDsAreStableUUIDv5(t *testing.T) {
	t.Parallel()
	a, b := ChildRunID("run:fan[3]"), ChildRunID("run:fan[3]")
	if a != b || a == ChildRunID("run:fan[4]") {
		t.Fatalf("child ids %s %s not stable or not distinct", a, b)
	}
	want := uuid.NewSHA1(uuid.UUID(runNamespace), []byte("child:run:fan[3]")).String()
	if a != want {
		t.Fatalf("ChildRunID = %s, want RFC 9562 v5 %s", a, want)
	}
	if SuccessorRunID("r", "q") == SuccessorRunID("r", "q2") {
		t.Fatal("successor ids must differ by request id")
	}
}
