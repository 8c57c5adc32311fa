package history

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/kvbench/kvbench/pkg/results"
)

// Environment is what an attempt's figures depend on besides the server
// under test: the load machine, the server's configuration, the setup
// and the settings. Two runs are compared only within one environment.
type Environment struct {
	// ClientHost, CPUModel, Cores and Kernel describe the machine that
	// ran the load generator.
	ClientHost string `json:"client_host" db:"client_host"`
	CPUModel   string `json:"cpu_model" db:"cpu_model"`
	Cores      int    `json:"cores" db:"cores"`
	Kernel     string `json:"kernel" db:"kernel"`
	// ServerConfig is the server's effective persistence configuration.
	ServerConfig string `json:"server_config" db:"server_config"`
	// TLS, Shards and Agents are the setup: TLS or plaintext, the masters
	// of a cluster, the load-generator processes.
	TLS    bool `json:"tls" db:"tls"`
	Shards int  `json:"shards" db:"shards"`
	Agents int  `json:"agents" db:"agents"`
	// Requests, Keyspace, Pipeline, Connections and ValueSize are the
	// load's settings.
	Requests    int64 `json:"requests" db:"requests"`
	Keyspace    int64 `json:"keyspace" db:"keyspace"`
	Pipeline    int   `json:"pipeline" db:"pipeline"`
	Connections int   `json:"connections" db:"connections"`
	ValueSize   int   `json:"value_size" db:"value_size"`
	// RESP3 says the load spoke RESP3. Fields from here on were appended:
	// at their zero value they are left out of the fingerprint, so that
	// the environments stored before keep theirs.
	RESP3 bool `json:"resp3,omitempty" db:"resp3"`
	// Placement is where the server and the load generator ran (run
	// --cpus): another placement is another setting. Unpinned is empty,
	// as in the rows written before the column.
	Placement string `json:"placement,omitempty" db:"placement"`
}

// envAppended is the index in envFields of the first field appended after
// the first schema (see Fingerprint).
var envAppended = slices.IndexFunc(envFields, func(f fieldCol) bool { return f.name == "resp3" })

// EnvironmentOf is the environment of an attempt, from its main row (a
// workload's total row). Files written before the agents column read 0
// agents, which is 1.
func EnvironmentOf(r *results.Row) Environment {
	return Environment{
		ClientHost: r.ClientHost, CPUModel: r.CPUModel, Cores: r.Cores, Kernel: r.Kernel,
		ServerConfig: r.ServerConfig, TLS: r.TLS, Shards: r.Shards, Agents: max(r.Agents, 1),
		Requests: r.Requests, Keyspace: r.Keyspace, Pipeline: r.Pipeline, Connections: r.Connections,
		ValueSize: r.ValueSize, RESP3: r.RESP3, Placement: placementOf(r),
	}
}

// placementOf is the row's placement as an environment holds it: empty
// when unpinned ("off", or a row written before the column).
func placementOf(r *results.Row) string {
	if r.Placement == "off" {
		return ""
	}
	return r.Placement
}

// envFields are Environment's columns, in field order.
var envFields = taggedFields[Environment]("db")

// values are the environment's fields as strings, in envFields order.
func (e Environment) values() []string {
	v := reflect.ValueOf(e)
	out := make([]string, len(envFields))
	for i, f := range envFields {
		switch x := v.Field(f.index).Interface().(type) {
		case string:
			out[i] = x
		case int:
			out[i] = strconv.Itoa(x)
		case int64:
			out[i] = strconv.FormatInt(x, 10)
		case bool:
			out[i] = strconv.FormatBool(x)
		}
	}
	return out
}

// Fingerprint identifies the environment: 16 hex digits of the SHA-256 of
// its fields, each as name=value on a line of its own.
func (e Environment) Fingerprint() string {
	h := sha256.New()
	zero := Environment{}.values()
	for i, v := range e.values() {
		if i >= envAppended && v == zero[i] {
			continue
		}
		fmt.Fprintf(h, "%s=%s\n", envFields[i].name, v)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Diff lists what differs from o to e, as "cpu_model: A → B".
func (e Environment) Diff(o Environment) []string {
	var out []string
	ev, ov := e.values(), o.values()
	for i := range ev {
		if ev[i] != ov[i] {
			out = append(out, fmt.Sprintf("%s: %s → %s", envFields[i].name, orDash(ov[i]), orDash(ev[i])))
		}
	}
	return out
}

// String is the environment in a few words: the machine and the load.
func (e Environment) String() string {
	s := fmt.Sprintf("%s (%s, %d cores, %s); requests %d, keyspace %d, pipeline %d, connections %d, value size %d",
		orDash(e.ClientHost), orDash(e.CPUModel), e.Cores, orDash(e.Kernel), e.Requests, e.Keyspace, e.Pipeline, e.Connections, e.ValueSize)
	if e.TLS {
		s += ", TLS"
	}
	if e.Shards > 0 {
		s += fmt.Sprintf(", %d shards", e.Shards)
	}
	if e.Agents > 1 {
		s += fmt.Sprintf(", %d agents", e.Agents)
	}
	if e.Placement != "" {
		s += ", CPUs " + e.Placement
	}
	return s
}

// orDash is s, or "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
