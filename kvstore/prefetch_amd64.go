package kvstore

// prefetch asks the processor to load the cache line at addr, without
// waiting for it: unlike a load, it holds no place in the processor's
// queue of instructions in flight until the line arrives.
//
//go:noescape
func prefetch(addr uintptr)
