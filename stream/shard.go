package stream

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
)

// ShardID identifies the rows of one estimator: a random 128-bit number drawn
// when the estimator is made (New) or emptied (Reset). A saved state keeps its
// estimator's ids, and a merge keeps the union of both sides' ids, so that the
// ids of a state say which shards' rows it holds. Merge refuses two estimators
// that share an id: the same rows would be counted twice (a state merged
// twice, a merge merged again with one of its parts, two states saved from
// one run).
//
// The ids are identities only: they come from crypto/rand, not from the
// seed, and change nothing in the estimates, which stay reproducible. Two
// runs over the same data write states that differ in these 16 bytes only.
type ShardID [16]byte

// String returns the id in hexadecimal.
func (id ShardID) String() string { return hex.EncodeToString(id[:]) }

// MaxShards bounds the shard ids an estimator keeps: 64 KiB of ids. A merge
// of more shards keeps the MaxShards smallest ids of the union (a bottom-k
// sketch of the set): overlaps are then detected when the shared ids are
// among those kept, which is always the case for a state merged with
// itself, and, for a part merged back into a merge of m shards, with
// probability about MaxShards/m.
const MaxShards = 1 << 12

// ErrOverlap is matched, as well as ErrIncompatible, by the error of a Merge
// of estimators that share a shard id.
var ErrOverlap = errors.New("stream: overlapping states")

// overlapError matches ErrOverlap and ErrIncompatible.
type overlapError struct{ msg string }

func (e overlapError) Error() string { return e.msg }
func (e overlapError) Is(target error) bool {
	return target == ErrOverlap || target == ErrIncompatible
}

// Usage reports that the error is the caller's (vocab.IsUsage): the states
// given cannot be merged.
func (e overlapError) Usage() bool { return true }

// newShardID draws a random id. (crypto/rand does not fail on the systems Go
// supports: since Go 1.24 it crashes the program rather than return an error.)
func newShardID() ShardID {
	var id ShardID
	rand.Read(id[:])
	return id
}

// shardSet is a set of ids, sorted ascending and distinct; truncated says that
// it holds only the MaxShards smallest ids of the shards merged into it.
type shardSet struct {
	ids       []ShardID
	truncated bool
}

func newShardSet() shardSet { return shardSet{ids: []ShardID{newShardID()}} }

func compareIDs(a, b ShardID) int { return bytes.Compare(a[:], b[:]) }

// common returns an id in both sets, if there is one.
func (s shardSet) common(o shardSet) (ShardID, bool) {
	i, j := 0, 0
	for i < len(s.ids) && j < len(o.ids) {
		switch c := compareIDs(s.ids[i], o.ids[j]); {
		case c == 0:
			return s.ids[i], true
		case c < 0:
			i++
		default:
			j++
		}
	}
	return ShardID{}, false
}

// union returns the ids of both sets (which have none in common), truncated
// to the MaxShards smallest.
func (s shardSet) union(o shardSet) shardSet {
	ids := make([]ShardID, 0, min(len(s.ids)+len(o.ids), MaxShards))
	i, j := 0, 0
	for len(ids) < MaxShards && (i < len(s.ids) || j < len(o.ids)) {
		if j == len(o.ids) || (i < len(s.ids) && compareIDs(s.ids[i], o.ids[j]) < 0) {
			ids = append(ids, s.ids[i])
			i++
		} else {
			ids = append(ids, o.ids[j])
			j++
		}
	}
	return shardSet{ids: ids, truncated: s.truncated || o.truncated || i < len(s.ids) || j < len(o.ids)}
}

// valid reports whether the ids are sorted, distinct, at least one and at
// most MaxShards.
func (s shardSet) valid() bool {
	if len(s.ids) < 1 || len(s.ids) > MaxShards {
		return false
	}
	for i := 1; i < len(s.ids); i++ {
		if compareIDs(s.ids[i-1], s.ids[i]) >= 0 {
			return false
		}
	}
	return true
}

// Shards returns the ids of the shards whose rows the estimator holds, in
// ascending order, and whether the list is complete (false when more than
// MaxShards shards were merged: the list then holds the smallest ids).
func (e *Estimator) Shards() (ids []ShardID, complete bool) {
	return slices.Clone(e.shards.ids), !e.shards.truncated
}
