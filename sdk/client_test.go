package sdk_test

import (
	"context"
	"testing"

	"github.com/ductor/ductor/sdk"
)

func TestNewValidates(t *testing.T) {
	t.Parallel()
	c, err := sdk.New("", "dk_x")
	if err != nil || c == nil {
		t.Fatalf("New with the default URL: %v", err)
	}
	for _, bad := range [][2]string{{"127.0.0.1:8080", "dk_x"}, {"ftp://h", "dk_x"}, {"http://h", ""}, {"http://h", "secret"}} {
		if _, err := sdk.New(bad[0], bad[1]); err == nil {
			t.Errorf("New(%q, %q) succeeded", bad[0], bad[1])
		}
	}
	if err := (&sdk.Definition{Key: "k"}).Validate(); err == nil {
		t.Error("a definition without steps is valid")
	}
	if _, err := c.Publish(context.Background(), &sdk.Definition{Steps: []sdk.Step{sdk.TransformStep("a", "1")}}); err == nil {
		t.Error("Publish sent a definition without a key")
	}
}
