// Package load describes a load, the bottom layer of the load generator
// that every other part reads: Load, what shapes it (how much, how fast,
// over how many connections, which keys and values, what is checked),
// with its one Validate; and Config, one run of it: the server it goes
// to, the request mix it sends, which agent's share it is, and the hooks
// that watch it, with Normalize and its JSON codec (the settings of a
// result, and what an agent is given). Package loadgen runs a Config,
// and names these types as loadgen.Config and loadgen.Load; the options
// of "kvbench bench" and "kvbench run" embed them.
package load
