package keyslot

import "testing"

// TestHashTags: keys that share a hash tag share a slot, and the tag rules
// for empty and nested braces.
func TestHashTags(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Fatalf("CRC16(123456789) = %#x, want 0x31c3", got)
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"{user1000}.following", "{user1000}.followers", true},
		{"{user1000}.following", "user1000", true},
		{"foo{}{bar}", "foo{}{bar}x", false}, // empty first tag: whole key
		{"foo{{bar}}zap", "{bar", true},      // tag is "{bar"
		{"a", "b", false},
	} {
		if got := Of([]byte(tc.a)) == Of([]byte(tc.b)); got != tc.same {
			t.Errorf("Of(%q)=%d, Of(%q)=%d: same %v, want %v", tc.a, Of([]byte(tc.a)), tc.b, Of([]byte(tc.b)), got, tc.same)
		}
	}
	if got := Of([]byte("foo")); got != 12182 { // redis-cli CLUSTER KEYSLOT foo
		t.Errorf("Of(foo) = %d, want 12182", got)
	}
}

// TestSpecExamples checks the Redis Cluster specification's examples.
func TestSpecExamples(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x31C3 {
		t.Errorf("CRC16(123456789) = %#x, want 0x31c3", got)
	}
	a, b := Of([]byte("{user1000}.following")), Of([]byte("{user1000}.followers"))
	if a != b || a != Of([]byte("user1000")) {
		t.Errorf("hash tags: slots %d and %d, want both %d", a, b, Of([]byte("user1000")))
	}
	for _, tt := range []struct {
		key, hashed string
	}{
		{"foo{}{bar}", "foo{}{bar}"}, // an empty tag: the whole key
		{"foo{{bar}}zap", "{bar"},    // up to the first }
		{"foo{bar}{zap}", "bar"},     // the first tag only
		{"{", "{"},
		{"}{", "}{"},
	} {
		if got, want := Of([]byte(tt.key)), int(CRC16([]byte(tt.hashed)))%Count; got != want {
			t.Errorf("Of(%q) = %d, want %d (the slot of %q)", tt.key, got, want, tt.hashed)
		}
	}
	// Known slots, as CLUSTER KEYSLOT reports them.
	for key, want := range map[string]int{"foo": 12182, "bar": 5061, "": 0} {
		if got := Of([]byte(key)); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
}
