package engine

import (
	"crypto/sha1"
	"fmt"
)

// runNamespace is the UUIDv5 namespace of the run ids Ductor derives.
var runNamespace = [16]byte{0x6d, 0x1f, 0x3c, 0x2e, 0x8a, 0x4b, 0x5c, 0x7d, 0x9e, 0x0f, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 0x6f}

// ChildRunID is the id of the child run started under key (a parent
// node's idempotency key): derived, so a re-executed tick starts the same
// child rather than a second one.
func ChildRunID(key string) string { return uuidV5("child:" + key) }

// SuccessorRunID is the id of the ContinueAsNew successor of a run for one
// request: two replicas submitting the same request converge on one run.
func SuccessorRunID(runID, requestID string) string {
	return uuidV5("successor:" + runID + ":" + requestID)
}

// uuidV5 is RFC 9562's name-based UUID (SHA-1) in runNamespace.
func uuidV5(name string) string {
	h := sha1.New()
	h.Write(runNamespace[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
