package rank

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"slices"
)

// maxShards bounds the shard ids a state keeps (the smallest of a union).
const maxShards = 1 << 12

// shardSet holds the random ids of the runs whose rows an accumulator
// holds, sorted: merging two that share an id would count rows twice.
type shardSet struct {
	ids       [][16]byte
	truncated bool
}

func newShardSet() shardSet {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return shardSet{ids: [][16]byte{id}}
}

func cmpID(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) }

// common returns an id both sets hold.
func (s shardSet) common(o shardSet) ([16]byte, bool) {
	for _, id := range s.ids {
		if _, ok := slices.BinarySearchFunc(o.ids, id, cmpID); ok {
			return id, true
		}
	}
	return [16]byte{}, false
}

// union returns the ids of both (the maxShards smallest).
func (s shardSet) union(o shardSet) shardSet {
	ids := slices.Concat(s.ids, o.ids)
	slices.SortFunc(ids, cmpID)
	ids = slices.Compact(ids)
	u := shardSet{ids: ids, truncated: s.truncated || o.truncated}
	if len(ids) > maxShards {
		u.ids, u.truncated = ids[:maxShards], true
	}
	return u
}

func (s shardSet) strings() []string {
	out := make([]string, len(s.ids))
	for i, id := range s.ids {
		out[i] = hex.EncodeToString(id[:])
	}
	return out
}
