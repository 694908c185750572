// Package kafka reads the rows of a Kafka topic as a member of a consumer
// group, through franz-go, for dime monitor:
//
//	kafka://HOST:PORT[,HOST:PORT...]/TOPIC?group=G&format=json|arrow
//
// with the optional parameters start=earliest|latest, client_id=ID,
// instance_id=ID (a static member: a restart takes its partitions back at
// once) and idle=DURATION (end the input when nothing came for that long;
// see Source). SASL and TLS settings come from the
// environment (Auth), never from the URL, and never appear in a message.
//
// # Messages
//
// format=json: each message is one JSON object, one row; the selected
// columns are its fields, by name, and must be numbers (a missing field, a
// string, null, or a number beyond Config.MaxAbs makes the message invalid).
// Globs (Config.X, Config.Y) are expanded against the keys of the first
// message, in their order; plain names need not be in it. format=arrow: each
// message is one Arrow IPC stream (a schema, record batches, the end marker
// optional), its rows in order, its columns selected as those of a file
// (package io's Extractor: numbers, fixed-size lists, slices); every
// message's schema must select the columns the first one did.
//
// An invalid message stops the reading with a *MessageError naming the
// topic, partition and offset, or with Config.SkipInvalid is skipped and
// counted (a message that does not decode counts as one row; an Arrow row
// with a null or NaN as one row).
//
// # Offsets: at-least-once
//
// The reader never commits on its own. The caller emits results over the
// rows it has read and then calls Commit(rows) with the number of rows the
// emitted results hold (for dime monitor, a window's end row): the offset
// after every message whose rows all lie among them is committed, per
// partition. A message cut by a window boundary is committed with the
// window that holds its last row; an invalid message with the rows before
// it. So a member that stops, crashes or is killed is followed (by itself
// after a restart, or by another member) from the offsets of the last
// emitted result: the rows read since then are read again (at most the
// rows of the window in progress, and of the message cut by its end), none
// is lost. A stop that emits its last partial window and commits (Limit,
// SIGINT, SIGTERM in dime monitor) reads nothing twice.
//
// Rebalances: on a revocation the emitted rows of the revoked partitions
// are committed at once; their rows not yet emitted stay in the caller's
// window and are read again by the partition's next owner (counted twice
// across the group, never lost). A partition that comes back to the same
// reader (a rebalance, a coordinator that lost the group's members) resumes
// after the last message the reader read, not from the committed offset, and
// a message it has read already is dropped: one reader never yields a
// message twice.
//
// # Order
//
// Blocks (Next) hold what one poll returned, so their sizes depend on
// timing; a caller whose results depend on block boundaries should cut the
// rows into blocks of its own (dime monitor fixes its shuffle scopes).
//
// Within a partition, rows come in offset order. Across partitions they
// come interleaved as the client's fetches return them, which is not
// reproducible: windows over a topic of several partitions hold the same
// rows as a file of them only when the topic has one partition (or the
// producer and the windows are keyed so that it does not matter).
package kafka
