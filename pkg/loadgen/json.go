package loadgen

import (
	"fmt"

	"github.com/kvbench/kvbench/pkg/measure"
)

// The JSON form of a Result is the measurement's (package measure), then
// "seed", "settings" (the Config, below), for a replay "replay" (its
// capture's replay.Stats) and, for a run that failed part way, "error".
// "kvbench merge" reads it back; documents of earlier versions decode
// too. The Config's JSON alone is the load an agent receives
// ("kvbench bench --load-json"): every setting but the password, the TLS
// material (only whether TLS is on), a replay's capture and the hooks.

// MarshalJSON encodes r: the measurement, then the seed, the settings,
// the replay's counts and the error.
func (r Result) MarshalJSON() ([]byte, error) {
	extra := []measure.Field{{Name: "seed", Value: r.Config.Seed}, {Name: "settings", Value: r.Config}}
	if r.Replay != nil {
		extra = append(extra, measure.Field{Name: "replay", Value: r.Replay})
	}
	if r.Error != "" {
		extra = append(extra, measure.Field{Name: "error", Value: r.Error})
	}
	return measure.Encode(&r.Result, extra...)
}

// UnmarshalJSON decodes what MarshalJSON wrote, strictly: a field it
// does not know, a histogram that does not decode or settings that are
// not valid are errors naming the field.
func (r *Result) UnmarshalJSON(b []byte) error {
	*r = Result{}
	var seed int64
	err := measure.Decode(b, &r.Result, []measure.Field{
		{Name: "seed", Value: &seed}, {Name: "settings", Value: &r.Config}, {Name: "error", Value: &r.Error},
		{Name: "replay", Value: &r.Replay},
	})
	if err != nil {
		return err
	}
	r.Config.Seed = seed
	c, err := r.Config.Normalize()
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	r.Config = c
	return nil
}
