//go:build race

package stats

// raceDetector says the tests run under the race detector (go test
// -race), which slows a simulation of one goroutine six times and has
// nothing to find in it.
const raceDetector = true
