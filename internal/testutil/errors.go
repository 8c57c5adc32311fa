package testutil

import (
	"errors"
	"testing"
)

// CheckError wants err to read exactly want and to wrap is.
func CheckError(t testing.TB, err error, want string, is error) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, is) {
		t.Errorf("error %v is not %v", err, is)
	}
}
