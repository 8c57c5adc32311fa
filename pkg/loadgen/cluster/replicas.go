package cluster

// Reads from replicas: a Route given its masters' replicas (AddReplicas)
// routes a read by ReadOwner to one of the replicas of the read key's
// slot's master, spread over them by the request's position in its
// connection's stream, and to the master itself when it has none. The
// replicas are fixed for the run: a master that takes over slots (a
// failover) serves their reads itself.

// AddReplicas makes the replicas of t's masters nodes of the route, the
// nodes ReadOwner sends reads to, and returns the masters that have
// none, whose reads go to them. t is the topology the route was made of.
func (rt *Route) AddReplicas(t *Topology) (alone []string) {
	reps := make([][]int32, len(t.Masters))
	for m, master := range t.Masters {
		mi := rt.Node(master)
		if int(mi) >= len(reps) {
			reps = append(reps, make([][]int32, int(mi)+1-len(reps))...)
		}
		if m >= len(t.ReplicaAddrs) || len(t.ReplicaAddrs[m]) == 0 {
			alone = append(alone, master)
			continue
		}
		for _, a := range t.ReplicaAddrs[m] {
			ri := rt.Node(a)
			reps[mi] = append(reps[mi], ri)
			rt.mu.Lock()
			for int(ri) >= len(rt.masterOf) {
				rt.masterOf = append(rt.masterOf, -1)
			}
			rt.masterOf[ri] = mi
			rt.mu.Unlock()
		}
	}
	rt.reps = reps
	return alone
}

// ReadOwner returns the index of the node that serves a read of slot s,
// the request at position pos of its stream: one of the replicas of the
// slot's master, in turn by pos, or the master when it has none (or
// without AddReplicas).
func (rt *Route) ReadOwner(s uint16, pos uint64) int32 {
	o := rt.owner[s].Load()
	if o >= 0 && int(o) < len(rt.reps) {
		if r := rt.reps[o]; len(r) > 0 {
			return r[pos%uint64(len(r))]
		}
	}
	return o
}

// Replicas returns the replicas of node i (AddReplicas), by index.
func (rt *Route) Replicas(i int32) []int32 {
	if i < 0 || int(i) >= len(rt.reps) {
		return nil
	}
	return rt.reps[i]
}
