package vocab

import (
	"errors"
	"testing"
)

func TestUsagefAndAsUsage(t *testing.T) {
	cause := errors.New("disk on fire")
	err := Usagef("--x %q: %w", "a", cause)
	if !IsUsage(err) || !errors.Is(err, cause) || err.Error() != `--x "a": disk on fire` {
		t.Fatalf("Usagef: %v (usage %v, is cause %v)", err, IsUsage(err), errors.Is(err, cause))
	}
	if AsUsage(nil) != nil {
		t.Fatal("AsUsage(nil) is not nil")
	}
	m := AsUsage(cause)
	if !IsUsage(m) || !errors.Is(m, cause) || m.Error() != cause.Error() {
		t.Fatalf("AsUsage: %v", m)
	}
	if IsUsage(cause) {
		t.Fatal("a plain error counts as usage")
	}
}
