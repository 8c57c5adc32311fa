package runner

import "github.com/kvbench/kvbench/pkg/target"

// clusterTarget returns the built-in cluster target name
// (kvstore-cluster or redis-cluster) of shards masters, from the built-in
// kvstore's and redis's settings.
func clusterTarget(name string, shards int, kv target.KvstoreConfig, rc target.RedisConfig) (target.Target, error) {
	if name == target.DefaultKvstoreClusterName {
		kv.Port = 0
		return target.NewKvstoreCluster(target.KvstoreClusterConfig{KvstoreConfig: kv, Shards: shards})
	}
	return target.NewRedisCluster(target.RedisClusterConfig{RedisConfig: rc, Shards: shards})
}
