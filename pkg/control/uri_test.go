package control

import (
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want Endpoint
	}{
		{"redis://127.0.0.1", Endpoint{Addr: "127.0.0.1:6379"}},
		{"redis://localhost:7000/3", Endpoint{Addr: "localhost:7000", DB: 3}},
		{"redis://bench:s3cret@127.0.0.1:6380/0", Endpoint{Addr: "127.0.0.1:6380", User: "bench", Password: "s3cret"}},
		{"redis://:s3cret@127.0.0.1", Endpoint{Addr: "127.0.0.1:6379", Password: "s3cret"}},
		{"redis://s3cret@127.0.0.1", Endpoint{Addr: "127.0.0.1:6379", Password: "s3cret"}},
		{"redis://u%40x:p%2Fw@[::1]:6379", Endpoint{Addr: "[::1]:6379", User: "u@x", Password: "p/w"}},
		{"rediss://127.0.0.1:6380", Endpoint{Addr: "127.0.0.1:6380", TLS: true}},
		{"valkey://127.0.0.1/2", Endpoint{Addr: "127.0.0.1:6379", DB: 2}},
		{"unix:///run/redis/redis.sock", Endpoint{Addr: "unix:/run/redis/redis.sock"}},
		{"unix:///run/redis.sock?db=4", Endpoint{Addr: "unix:/run/redis.sock", DB: 4}},
	} {
		got, err := ParseURI(tc.uri)
		if err != nil || got != tc.want {
			t.Errorf("ParseURI(%q) = %+v, %v; want %+v", tc.uri, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ uri, want string }{
		{"http://127.0.0.1", "want a redis://"},
		{"127.0.0.1:6379", "want a redis://"},
		{"redis://", "no host"},
		{"redis://127.0.0.1:99999", "port"},
		{"redis://127.0.0.1/x", `database "x"`},
		{"redis://127.0.0.1/-1", `database "-1"`},
		{"unix://relative/path", "absolute path"},
		{"unix:///s.sock?db=x", `database "x"`},
		{"redis://a b", "invalid"},
	} {
		if _, err := ParseURI(tc.uri); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseURI(%q) = %v, want an error saying %q", tc.uri, err, tc.want)
		}
	}
}
