// Package keyspace is what a load's keys and values are: each a pure
// function of (seed, key number) and the settings, so that a writer and a
// verified reader of the same seed agree on every byte without sharing
// any state, and agents that split one load walk disjoint parts of it.
//
// Spec numbers a keyspace's keys and names them (Key, AppendName), one
// home for both; Gen draws one connection's key
// sequence in a Pattern (uniform, sequential, a permutation, Zipf,
// Gaussian, YCSB's insert and latest); AppendValue and ValueMatches make
// and check key i's value, AppendRandomValue and RandomValueMatches its
// incompressible variant; Sizes gives each key a value size from a
// weighted distribution. Everything here is on the load generator's hot
// path, and allocates nothing per key.
package keyspace
