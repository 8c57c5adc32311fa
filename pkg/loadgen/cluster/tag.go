package cluster

import "github.com/kvbench/kvbench/pkg/keyslot"

// tagAlphabet is what tags are made of.
const tagAlphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// maxTagTries bounds the tags FindTag tries: every tag of TagWidth
// characters.
const maxTagTries = len(tagAlphabet) * len(tagAlphabet) * len(tagAlphabet)

// TagWidth is the length of a tag, mix.TagWidth.
const TagWidth = 3

// FindTag returns the first tag of TagWidth characters whose slot owns
// accepts, and that slot: a hash tag ("{tag}") that puts a key on the
// master owning the slot. ok is false when no slot is accepted.
func FindTag(owns func(slot uint16) bool) (tag [TagWidth]byte, slot uint16, ok bool) {
	n := len(tagAlphabet)
	for i := range maxTagTries {
		tag = [TagWidth]byte{tagAlphabet[i%n], tagAlphabet[i/n%n], tagAlphabet[i/n/n]}
		slot = uint16(keyslot.Of(tag[:]))
		if owns(slot) {
			return tag, slot, true
		}
	}
	return tag, 0, false
}

// Tag returns a hash tag for master m of t (FindTag).
func (t *Topology) Tag(m int) (tag [TagWidth]byte, ok bool) {
	tag, _, ok = FindTag(func(s uint16) bool { return int(t.Owner[s]) == m })
	return tag, ok
}
