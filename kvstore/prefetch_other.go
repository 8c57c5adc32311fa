//go:build !amd64

package kvstore

// prefetch does nothing where no instruction is wired up for it.
func prefetch(uintptr) {}
