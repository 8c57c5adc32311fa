//go:build race

package runner

// raceEnabled: the race detector slows the in-process load generator
// several times over, while redis-server keeps its speed.
const raceEnabled = true
